package command

// hiddenCommands are plumbing, not for people: the built-in provider's plugin
// entry point is started by rackform itself.
var hiddenCommands = []string{"provider redfish"}

// commands returns every subcommand by name. Each lives in its own file.
func (m *Meta) commands() map[string]runner {
	return map[string]runner{
		"version":          &versionCommand{Meta: m},
		"validate":         &validateCommand{Meta: m},
		"fmt":              &fmtCommand{Meta: m},
		"sim":              &simCommand{Meta: m},
		"demo":             &demoCommand{Meta: m},
		"plan":             &planCommand{Meta: m},
		"show":             &showCommand{Meta: m},
		"provider redfish": &providerRedfishCommand{Meta: m},
		"providers lock":   &providersLockCommand{Meta: m},
		"apply":            &applyCommand{Meta: m},
		"continue":         &continueCommand{Meta: m},
		"approve":          &approveCommand{Meta: m},
		"stop":             &stopCommand{Meta: m},
		"skip":             &skipCommand{Meta: m},
		"status":           &statusCommand{Meta: m},
		"force-unlock":     &forceUnlockCommand{Meta: m},
		"keygen":           &keygenCommand{Meta: m},
		"rehearse":         &rehearseCommand{Meta: m},
	}
}
