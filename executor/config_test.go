package executor

import (
	"strings"
	"testing"

	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
)

func TestTaskSettings(t *testing.T) {
	s, err := parseTaskSettings(nil)
	if err != nil || s.batchSize != execop.DefaultBatchSize || s.memoryLimit != 0 {
		t.Fatalf("no settings: %+v, %v; want exec's default batch size and no limit", s, err)
	}
	s, err = parseTaskSettings(map[string]string{"quiver.batch_size": "7", "quiver.memory_limit": "4GiB", "quiver.target_partitions": "3"})
	if err != nil || s.batchSize != 7 || s.memoryLimit != 4<<30 {
		t.Fatalf("settings: %+v, %v", s, err)
	}
	for name, bad := range map[string]string{"quiver.memory_limit": "lots", "quiver.batch_size": "0"} {
		_, err := parseTaskSettings(map[string]string{name: bad})
		if !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), "executor: setting "+name) || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("%s = %q: %v; want a planning error naming the executor, the setting and the value", name, bad, err)
		}
	}
}
