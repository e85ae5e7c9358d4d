package sim

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"
)

// sessionStore is one BMC's Redfish sessions (SessionService): opened up
// to the fleet's limit (or a session-limit fault's), looked up by token,
// deleted, and all lost when the BMC restarts. Its BMC's mu is held for
// every method.
type sessionStore struct {
	fleet  *Fleet
	faults *faultSet // session-limit
	list   []*session
	next   int // the last session's Id
	// Counters for Stats.
	created, deleted, refused int
}

type session struct {
	id, token string
	lastUsed  time.Time
}

// open opens a session at now, or returns nil at the limit.
func (ss *sessionStore) open(now time.Time) *session {
	timeout := ss.fleet.timings.SessionTimeout
	live := ss.list[:0]
	for _, s := range ss.list {
		if now.Sub(s.lastUsed) < timeout {
			live = append(live, s)
		}
	}
	ss.list = live
	limit := ss.fleet.opts.SessionLimit
	if ft, ok := ss.faults.take(FaultSessionLimit, 0); ok {
		limit = ft.Limit
	}
	if len(ss.list) >= limit {
		ss.refused++
		return nil
	}
	ss.next++
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	s := &session{id: strconv.Itoa(ss.next), token: hex.EncodeToString(tok[:]), lastUsed: now}
	ss.list = append(ss.list, s)
	ss.created++
	return s
}

func (ss *sessionStore) byToken(tok string) *session {
	for _, s := range ss.list {
		if s.token == tok {
			return s
		}
	}
	return nil
}

func (ss *sessionStore) remove(id string) bool {
	for i, s := range ss.list {
		if s.id == id {
			ss.list = append(ss.list[:i:i], ss.list[i+1:]...)
			ss.deleted++
			return true
		}
	}
	return false
}

// drop loses every session, as a restarting BMC does: an old X-Auth-Token
// answers 401 afterwards.
func (ss *sessionStore) drop() { ss.list = nil }

func (ss *sessionStore) doc(s *session) map[string]any {
	return resource("/redfish/v1/SessionService/Sessions/"+s.id, "#Session.v1_3_0.Session", s.id, "User Session", map[string]any{"UserName": ss.fleet.opts.Username})
}
