package sim

import "strings"

// The AccountService every simulated BMC serves: one account (the fleet's
// user, an Administrator) and the three roles DSP0266 makes mandatory
// (Administrator, Operator, ReadOnly) with their standard privileges.
// Read-only: the simulator's credentials are the fleet's Options.

const accountServicePath = "/redfish/v1/AccountService"

// standardRoles are the predefined roles and their assigned privileges
// (Redfish's Base privilege registry).
var standardRoles = []struct {
	id         string
	privileges []string
}{
	{"Administrator", []string{"Login", "ConfigureManager", "ConfigureUsers", "ConfigureSelf", "ConfigureComponents"}},
	{"Operator", []string{"Login", "ConfigureSelf", "ConfigureComponents"}},
	{"ReadOnly", []string{"Login", "ConfigureSelf"}},
}

// renderAccounts returns the AccountService resource at p, if p is one;
// user is the account's UserName.
func renderAccounts(p, user string) (map[string]any, bool) {
	const accounts, roles = accountServicePath + "/Accounts", accountServicePath + "/Roles"
	switch p {
	case accountServicePath:
		return resource(p, "#AccountService.v1_5_0.AccountService", "AccountService", "Account Service", map[string]any{
			"ServiceEnabled": true,
			"Status":         map[string]any{"State": "Enabled", "Health": "OK"},
			"Accounts":       ref(accounts),
			"Roles":          ref(roles),
		}), true
	case accounts:
		return collection(p, "#ManagerAccountCollection.ManagerAccountCollection", "Accounts Collection", []string{accounts + "/1"}), true
	case accounts + "/1":
		return resource(p, "#ManagerAccount.v1_3_0.ManagerAccount", "1", "User Account", map[string]any{
			"UserName": user,
			"RoleId":   "Administrator",
			"Enabled":  true,
			"Locked":   false,
			"Password": nil,
			"Links":    map[string]any{"Role": ref(roles + "/Administrator")},
		}), true
	case roles:
		members := make([]string, len(standardRoles))
		for i, r := range standardRoles {
			members[i] = roles + "/" + r.id
		}
		return collection(p, "#RoleCollection.RoleCollection", "Roles Collection", members), true
	}
	if id, ok := strings.CutPrefix(p, roles+"/"); ok {
		for _, r := range standardRoles {
			if r.id == id {
				return resource(p, "#Role.v1_2_0.Role", r.id, r.id+" User Role", map[string]any{
					"RoleId":             r.id,
					"IsPredefined":       true,
					"AssignedPrivileges": r.privileges,
				}), true
			}
		}
	}
	return nil, false
}
