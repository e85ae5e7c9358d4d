package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAdminAPI(t *testing.T) {
	f := start(t, Options{}, BMCSpec{Name: "a", PowerOn: true}, BMCSpec{Name: "b"})
	admin := httptest.NewServer(f.AdminHandler())
	defer admin.Close()
	post := func(body string) int {
		resp, err := http.Post(admin.URL+"/faults", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(`{"name":"a","fault":"error:1"}`); s != 204 {
		t.Fatalf("POST /faults: %d", s)
	}
	u := f.BMCs()[0].URL
	if r := call(t, "GET", u+"/redfish/v1/Systems", nil, true); r.status != 500 {
		t.Errorf("after error fault: %d", r.status)
	}
	call(t, "GET", u+"/redfish/v1/Systems", nil, true)
	resp, err := http.Get(admin.URL + "/stats/a")
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st.Requests != 2 || st.Errors != 1 || st.FaultsInjected != 1 || st.PowerState != "On" {
		t.Errorf("stats %+v", st)
	}
	resp, _ = http.Get(admin.URL + "/stats")
	var all struct{ BMCs map[string]Stats }
	json.NewDecoder(resp.Body).Decode(&all)
	resp.Body.Close()
	if len(all.BMCs) != 2 {
		t.Errorf("GET /stats: %d BMCs", len(all.BMCs))
	}
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"name":"zz","fault":"busy"}`, 400},
		{`{"name":"a","fault":"explode"}`, 400},
		{`{"rates":{"busy":0.5},"seed":3}`, 204},
		{`{"rates":{"nope":0.5}}`, 400},
		{`{"name":"a","clear":true}`, 204},
		{`not json`, 400},
	} {
		if s := post(tc.body); s != tc.want {
			t.Errorf("POST /faults %s: %d, want %d", tc.body, s, tc.want)
		}
	}
	if resp, _ := http.Get(admin.URL + "/stats/zz"); resp.StatusCode != 404 {
		t.Errorf("unknown BMC stats: %d", resp.StatusCode)
	}
}
