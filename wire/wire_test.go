package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func TestMapKeepsNilAndStopsAtAnError(t *testing.T) {
	if out, err := Map[int, int](nil, func(int) (int, error) { return 0, nil }); out != nil || err != nil {
		t.Errorf("nil input: %v, %v", out, err)
	}
	if out, err := Map([]int{}, func(int) (int, error) { return 0, nil }); out == nil || len(out) != 0 || err != nil {
		t.Errorf("empty input: %v, %v", out, err)
	}
	calls := 0
	_, err := Map([]int{1, 2, 3}, func(x int) (int, error) {
		calls++
		if x == 2 {
			return 0, errors.New("two")
		}
		return x, nil
	})
	if err == nil || calls != 2 {
		t.Errorf("error at 2: err %v after %d calls", err, calls)
	}
}

func TestUnmarshalAndRecover(t *testing.T) {
	var m rpc.PhysicalPlan
	err := Unmarshal([]byte{0xff, 0xff, 0xff}, &m, "physical plan")
	if !qerr.Is(err, qerr.Internal) || !strings.Contains(err.Error(), "unmarshal physical plan") {
		t.Errorf("garbage: %v", err)
	}
	decode := func() (err error) {
		defer Recover(&err)
		var s []int
		_ = s[3]
		return nil
	}
	if err := decode(); !qerr.Is(err, qerr.Internal) || !strings.Contains(err.Error(), "malformed input") {
		t.Errorf("a panic became %v", err)
	}
}
