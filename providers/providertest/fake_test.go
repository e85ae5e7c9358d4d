package providertest_test

import (
	"testing"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

func TestFakeConformance(t *testing.T) {
	providertest.Run(t, providertest.FakeFixture(func(*testing.T) providers.Provider {
		return providertest.NewFake(providertest.FakeFleet()...)
	}))
}
