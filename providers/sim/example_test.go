package sim_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rackform/rackform/providers/sim"
)

// A BIOS update through SimpleUpdate: the task runs for the flash time, and
// the version changes after the host reset that BIOS needs. The clock is
// moved by hand here; with Speed 6000 and the real clock the same flow takes
// about 120 ms.
func Example() {
	var clock atomic.Int64 // simulated time, read by the fleet's goroutines
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	fleet, err := sim.New(sim.Options{
		Username: "admin", Password: "test-only",
		Now: func() time.Time { return time.Unix(0, clock.Load()) },
	}, []sim.BMCSpec{{Name: "r01-c01", Addr: "127.0.0.1:0", Profile: sim.ProfileDMTF, PowerOn: true, Firmware: map[string]string{"BIOS": "2.70"}}})
	if err != nil {
		panic(err)
	}
	if err := fleet.Start(context.Background()); err != nil {
		panic(err)
	}
	defer fleet.Close()
	url := fleet.BMCs()[0].URL

	post := func(path, body string) int {
		req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
		req.SetBasicAuth("admin", "test-only")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println("SimpleUpdate:", post("/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
		`{"ImageURI": "http://127.0.0.1:9/images/bios-2.80.bin", "@Redfish.OperationApplyTime": "OnReset"}`))
	advance(10 * time.Minute) // the flash
	fmt.Println("after the flash:", fleet.Versions("r01-c01")["BIOS"], fleet.Stats("r01-c01").Flashes)
	fmt.Println("reset:", post("/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", `{"ResetType": "ForceRestart"}`))
	advance(2 * time.Minute) // the boot
	power, _ := fleet.PowerState("r01-c01")
	fmt.Println("after the boot:", fleet.Versions("r01-c01")["BIOS"], power)
	// Output:
	// SimpleUpdate: 202
	// after the flash: 2.70 map[BIOS:1]
	// reset: 204
	// after the boot: 2.80 On
}
