package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/quiverdb/quiver/qerr"
)

// TicketKeyBytes is the length of a ticket signing key.
const TicketKeyBytes = 32

// A ticket is refused for one of these reasons (wrapped in the error
// Verify returns, so callers map them to gRPC codes with errors.Is).
var (
	// ErrTicketMalformed: the bytes are not a signed ticket at all.
	ErrTicketMalformed = errors.New("the ticket is not a signed Flight ticket")
	// ErrTicketForged: the signature does not match the fields (a ticket
	// made up, or a signed one with a field changed).
	ErrTicketForged = errors.New("the ticket's signature does not match")
	// ErrTicketExpired: the signature matches but the expiry has passed.
	ErrTicketExpired = errors.New("the ticket has expired")
)

// TicketKey is the secret the scheduler signs Flight tickets with and the
// executors check them with. The scheduler makes one at start (a fresh
// random key: no client, token holder or not, can derive it) and hands it
// to each executor in its registration answer. The zero TicketKey signs
// nothing and verifies nothing.
type TicketKey struct {
	k []byte
}

// NewTicketKey returns a fresh random key.
func NewTicketKey() (TicketKey, error) {
	b := make([]byte, TicketKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return TicketKey{}, qerr.Internalf("auth: making a ticket key: %w", err)
	}
	return TicketKey{k: b}, nil
}

// TicketKeyFrom wraps key bytes received from the scheduler.
func TicketKeyFrom(b []byte) (TicketKey, error) {
	if len(b) != TicketKeyBytes {
		return TicketKey{}, qerr.Internalf("auth: a ticket key has %d bytes, got %d", TicketKeyBytes, len(b))
	}
	return TicketKey{k: append([]byte(nil), b...)}, nil
}

// Enabled reports whether the key is set.
func (k TicketKey) Enabled() bool { return len(k.k) == TicketKeyBytes }

// Bytes is the key as sent to executors (a copy).
func (k TicketKey) Bytes() []byte { return append([]byte(nil), k.k...) }

// Ticket is what a Flight DoGet may fetch: one file of one (job, stage,
// output partition, map partition), read as part of cache entry Cache (""
// for shuffle input and results), until Expires.
type Ticket struct {
	JobID           string
	StageID         int
	OutputPartition int
	MapPartition    int
	Cache           string
	Expires         time.Time
}

func (t Ticket) String() string {
	s := fmt.Sprintf("%s/%d/%d/data-%d", t.JobID, t.StageID, t.OutputPartition, t.MapPartition)
	if t.Cache != "" {
		s += " (cache " + t.Cache + ")"
	}
	return s
}

// ticketVersion is the first byte of every ticket.
const ticketVersion = 1

// Limits on a ticket's strings: a decoder never allocates more than this.
const (
	maxTicketJob   = 256
	maxTicketCache = 256
)

// Sign encodes t and appends its HMAC-SHA256 under k. The encoding is
// fixed (version, length-prefixed strings, zig-zag varints, expiry in Unix
// milliseconds), so the signed bytes are exactly the bytes sent.
func (k TicketKey) Sign(t Ticket) []byte {
	b := []byte{ticketVersion}
	b = binary.AppendUvarint(b, uint64(len(t.JobID)))
	b = append(b, t.JobID...)
	b = binary.AppendVarint(b, int64(t.StageID))
	b = binary.AppendVarint(b, int64(t.OutputPartition))
	b = binary.AppendVarint(b, int64(t.MapPartition))
	b = binary.AppendUvarint(b, uint64(len(t.Cache)))
	b = append(b, t.Cache...)
	b = binary.AppendVarint(b, t.Expires.UnixMilli())
	return append(b, k.mac(b)...)
}

func (k TicketKey) mac(body []byte) []byte {
	h := hmac.New(sha256.New, k.k)
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks b's signature under k and then its expiry against now, and
// returns the ticket. The signature is checked before any field is read,
// so nothing of an unsigned ticket is trusted. The error wraps
// ErrTicketMalformed, ErrTicketForged or ErrTicketExpired.
func (k TicketKey) Verify(b []byte, now time.Time) (Ticket, error) {
	if !k.Enabled() {
		return Ticket{}, qerr.Internalf("auth: no ticket key to verify with")
	}
	if len(b) < 1+sha256.Size || b[0] != ticketVersion {
		return Ticket{}, fmt.Errorf("%w (%d bytes)", ErrTicketMalformed, len(b))
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if !hmac.Equal(sum, k.mac(body)) {
		return Ticket{}, ErrTicketForged
	}
	t, err := decodeTicket(body[1:])
	if err != nil {
		return Ticket{}, fmt.Errorf("%w: %v", ErrTicketMalformed, err)
	}
	if !now.Before(t.Expires) {
		return Ticket{}, fmt.Errorf("%w: %s expired at %s", ErrTicketExpired, t, t.Expires.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// decodeTicket reads the fields Sign wrote after the version byte.
func decodeTicket(b []byte) (Ticket, error) {
	var t Ticket
	str := func(limit int) (string, error) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(limit) || n > uint64(len(b)-w) {
			return "", errors.New("bad string length")
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, nil
	}
	num := func() (int64, error) {
		v, w := binary.Varint(b)
		if w <= 0 {
			return 0, errors.New("bad number")
		}
		b = b[w:]
		return v, nil
	}
	var err error
	if t.JobID, err = str(maxTicketJob); err != nil {
		return t, err
	}
	var ids [3]int64
	for i := range ids {
		if ids[i], err = num(); err != nil {
			return t, err
		}
		if ids[i] < -1<<31 || ids[i] > 1<<31-1 {
			return t, errors.New("id out of range")
		}
	}
	t.StageID, t.OutputPartition, t.MapPartition = int(ids[0]), int(ids[1]), int(ids[2])
	if t.Cache, err = str(maxTicketCache); err != nil {
		return t, err
	}
	ms, err := num()
	if err != nil {
		return t, err
	}
	if len(b) != 0 {
		return t, errors.New("trailing bytes")
	}
	t.Expires = time.UnixMilli(ms)
	return t, nil
}
