package command

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// keygenCommand writes a plan signing key pair.
type keygenCommand struct {
	*Meta
	force bool
}

func (c *keygenCommand) Synopsis() string { return "Write an Ed25519 key pair for signing plans" }
func (c *keygenCommand) Usage() string    { return "rackform keygen [options] NAME" }

func (c *keygenCommand) Description() string {
	return `Writes a new Ed25519 key pair for signing plans: the private key to NAME
(PKCS#8 PEM, readable by its owner only) and the public key to NAME.pub
(PKIX PEM), and prints the key's fingerprint. The private key is never
printed. The files are the standard formats: openssl reads them, and keys
made with "openssl genpkey -algorithm ed25519" (private) and
"openssl pkey -in KEY -pubout" (public) work as well.

Give the private key to the job that runs plan only, as
` + EnvSigningKey + ` (the file's path, or its PEM text from a secret
store): plan then signs every plan it writes. Give the public key to the
job that runs apply, as ` + EnvTrustedKeys + ` (PEM text, or paths
separated by ":"; several keys allow rotation): apply then refuses a plan
that is unsigned, signed by another key, or changed after it was signed.

Existing files are not overwritten unless -force is given.

Exit status: 0 when the keys were written, 1 on errors, 2 on bad
arguments.`
}

func (c *keygenCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fs.BoolVar(&c.force, "force", false, "Overwrite NAME and NAME.pub when they exist.")
	return fs
}

func (c *keygenCommand) Run(_ context.Context, args []string) int {
	rest, code, ok := c.parseFlags(c, args)
	if !ok {
		return code
	}
	if len(rest) != 1 || rest[0] == "" {
		return c.usageFor("keygen", "keygen takes one file name for the private key, got %d arguments", len(rest))
	}
	name := rest[0]
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return c.fail("generating a key: %s", err)
	}
	privPEM, err := plan.MarshalPrivateKey(priv)
	if err != nil {
		return c.fail("encoding the private key: %s", err)
	}
	pubPEM, err := plan.MarshalPublicKey(pub)
	if err != nil {
		return c.fail("encoding the public key: %s", err)
	}
	if err := c.write(name, privPEM, 0o600); err != nil {
		return c.fail("%s", err)
	}
	if err := c.write(name+".pub", pubPEM, 0o644); err != nil {
		os.Remove(name)
		return c.fail("%s", err)
	}
	fmt.Fprintf(c.Stdout, "Wrote the private key to %s (mode 0600) and the public key to %s.pub.\n", name, name)
	fmt.Fprintf(c.Stdout, "Key fingerprint: %s\n", plan.Fingerprint(pub))
	fmt.Fprintf(c.Stdout, "Plan job:  %s=%s (keep it secret; only the plan job holds it)\n", EnvSigningKey, name)
	fmt.Fprintf(c.Stdout, "Apply job: %s=%s.pub\n", EnvTrustedKeys, name)
	return ExitOK
}

// write puts b at path with mode, refusing to replace a file unless
// -force. The file is written whole under a temporary name and given its
// mode before it takes path (regularfile), so the private key is never
// readable by others, whatever the umask, nor left half-written.
func (c *keygenCommand) write(path string, b []byte, mode os.FileMode) error {
	put := regularfile.Create
	if c.force {
		put = regularfile.Write
	}
	err := put(path, b, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; choose another name, or give -force to replace it", path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
