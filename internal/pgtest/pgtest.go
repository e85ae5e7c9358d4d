// Package pgtest starts a real PostgreSQL server for tests: initdb and
// pg_ctl into a temporary directory, listening on a Unix socket in that
// directory and on a free port of 127.0.0.1 only. One server serves a test
// package (start it from TestMain); each test gets its own database.
//
// When the process runs as root (CI), initdb refuses to run, so the server
// runs as the unprivileged "postgres" user (Debian's postgresql package
// creates it) through runuser, with the temporary directory given to it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rackform/rackform/internal/process"
	"github.com/rackform/rackform/internal/testenv"
)

// Admin is the superuser the test server is made with; Password is its
// password over TCP (the Unix socket trusts local connections).
const (
	Admin    = "rackform_test"
	Password = "pgtest-Secret-9f3a"
)

// ErrNoPostgres says no PostgreSQL server binary was found.
var ErrNoPostgres = errors.New("no PostgreSQL server binaries (initdb, pg_ctl) in PATH or /usr/lib/postgresql/*/bin: install Debian's postgresql package")

// Server is a running test server.
type Server struct {
	bin    string // directory of initdb, pg_ctl
	dir    string // temporary root
	data   string
	sock   string // Unix socket directory
	port   int
	asUser string // run pg commands as this user ("" = as ourselves)
	log    string
	dbs    atomic.Int64
	mu     sync.Mutex
}

// findBin returns the directory holding initdb and pg_ctl.
func findBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

// freePort returns a port of 127.0.0.1 nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start initialises and starts a server. The caller stops it with Stop.
func Start() (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	parent := ""
	if os.Geteuid() == 0 {
		// The server runs as the postgres user, who must reach the
		// directory: TMPDIR may be private to root, /tmp is not.
		if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
			parent = "/tmp"
		}
	}
	stopStale(bin, parent)
	dir, err := os.MkdirTemp(parent, "rackform-pg-")
	if err != nil {
		return nil, err
	}
	// The owner's pid, so that a later Start stops this server if the
	// test binary died without stopping it (a panic skips TestMain's end).
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "sock"), log: filepath.Join(dir, "server.log")}
	if err := s.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.StartServer(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) init() error {
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		if err := s.chown(s.dir); err != nil {
			return err
		}
	}
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		return err
	}
	pw := filepath.Join(s.dir, "pwfile")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o600); err != nil {
		return err
	}
	for _, p := range []string{s.sock, pw} {
		if err := s.chown(p); err != nil {
			return err
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.port = port
	out, err := s.cmd("initdb", "-D", s.data, "-U", Admin, "--pwfile", pw, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-instructions").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nmax_connections = 200\nlog_min_messages = warning\n", port, s.sock)
	f, err := os.OpenFile(filepath.Join(s.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// chown gives path to the user the server runs as (asUser), if not
// ourselves.
func (s *Server) chown(path string) error {
	if s.asUser == "" {
		return nil
	}
	u, err := user.Lookup(s.asUser)
	if err != nil {
		return fmt.Errorf("running as root, PostgreSQL must run as an unprivileged user, and there is no user %s: %w", s.asUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	var c *exec.Cmd
	if s.asUser != "" {
		c = exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		c = exec.Command(path, args...)
	}
	c.Dir = s.dir
	return c
}

// StartServer starts the (stopped) server and waits until it accepts
// connections.
func (s *Server) StartServer() error { return s.pgCtl("start", "-l", s.log) }

// StopServer stops the server at once (mode immediate: like a crash, no
// checkpoint; committed transactions survive through the WAL).
func (s *Server) StopServer() error { return s.pgCtl("stop", "-m", "immediate") }

// pgCtl runs pg_ctl's action on the server and waits for it to finish;
// its error holds pg_ctl's output and the server's log.
func (s *Server) pgCtl(action string, args ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.cmd("pg_ctl", append(append([]string{"-D", s.data}, args...), "-w", "-t", "60", action)...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(s.log)
		return fmt.Errorf("pg_ctl %s: %v\n%s\n%s", action, err, out, log)
	}
	return nil
}

// Stop stops the server and removes its files.
func (s *Server) Stop() {
	_ = s.StopServer()
	os.RemoveAll(s.dir)
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// SocketConn is a key/value connection string for db over the Unix socket.
func (s *Server) SocketConn(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", s.sock, s.port, Admin, db)
}

// TCPConn is a URL connection string for db over 127.0.0.1 with the
// admin's password.
func (s *Server) TCPConn(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(Admin, Password), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// NewDatabase creates an empty database and returns its name.
func (s *Server) NewDatabase(ctx context.Context, prefix string) (string, error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := fmt.Sprintf("%s_%d_%s", sanitize(prefix), s.dbs.Add(1), hex.EncodeToString(b))
	conn, err := pgx.Connect(ctx, s.SocketConn("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return name, nil
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 30 {
			break
		}
	}
	return b.String()
}

// Database creates a database for t and returns its Unix socket
// connection string.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, err := s.NewDatabase(ctx, t.Name())
	if err != nil {
		t.Fatalf("creating a test database: %v", err)
	}
	return s.SocketConn(name)
}

// Main starts a server for a test package, runs its tests and stops it.
// Without PostgreSQL binaries the tests run with srv nil and skip through
// Need, each reported with what to install (testenv); where PostgreSQL is
// required (RACKFORM_TEST_REQUIRE, as in CI) Need fails them instead.
func Main(m interface{ Run() int }, srv **Server) int {
	s, err := Start()
	switch {
	case errors.Is(err, ErrNoPostgres):
	case err != nil:
		fmt.Fprintln(os.Stderr, "pgtest: starting PostgreSQL:", err)
		return 1
	}
	if s != nil {
		testenv.Used(testenv.PostgreSQL)
	}
	*srv = s
	code := m.Run()
	if s != nil {
		s.Stop()
	}
	return code
}

// Own starts a server of t's own, stopped when t ends: for a test that
// stops and starts its server (a crash, an outage), which would cut off
// the other tests sharing the package's. Without PostgreSQL binaries it
// skips t as Need does.
func Own(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if errors.Is(err, ErrNoPostgres) {
		Need(t, nil)
	}
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	testenv.Used(testenv.PostgreSQL)
	t.Cleanup(s.Stop)
	return s
}

// Need skips t when there is no server (no PostgreSQL binaries here).
func Need(t testing.TB, s *Server) {
	t.Helper()
	if s == nil {
		testenv.Missing(t, testenv.PostgreSQL, "no initdb and pg_ctl in PATH or /usr/lib/postgresql/*/bin")
	}
}

// stopStale stops and removes the servers of earlier test binaries that
// died without stopping them: their owner.pid names no running process.
func stopStale(bin, parent string) {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, "rackform-pg-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || process.Running(pid) {
			continue
		}
		s := &Server{bin: bin, dir: d, data: filepath.Join(d, "data")}
		if fi, err := os.Stat(d); err == nil {
			if st, ok := statOwner(fi); ok && st != os.Geteuid() {
				s.asUser = "postgres"
			}
		}
		_ = s.StopServer()
		os.RemoveAll(d)
	}
}
