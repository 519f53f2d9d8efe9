package snapshot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const volcanoDocs = `apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: q1
  annotations:
    volcano.sh/card.quota: '{"NVIDIA-H200":3}'
status:
  state: Open
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: broken
  annotations:
    volcano.sh/card.quota: '{"NVIDIA-H200":'
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: job
  namespace: team
  annotations:
    volcano.sh/card.request: '{"A|B":2}'
spec:
  minMember: 2
status:
  phase: Pending
---
apiVersion: example.com/v1
kind: Queue
metadata:
  name: not-volcano
`

func TestVolcanoObjects(t *testing.T) {
	s, err := Parse([]byte(volcanoDocs), "v.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Queues) != 2 || len(s.PodGroups) != 1 || s.Skipped != 1 {
		t.Fatalf("queues %d podgroups %d skipped %d, want 2, 1, 1", len(s.Queues), len(s.PodGroups), s.Skipped)
	}
	c, probs := s.Cluster(engine.DefaultConfig())
	if !c.Volcano() || c.Queue("q1") == nil || c.Queue("q1").CardQuota["NVIDIA-H200"] != 3 || c.Queue("q1").State != "Open" {
		t.Errorf("queue q1 = %+v", c.Queue("q1"))
	}
	if len(probs) != 1 || probs[0].Kind != "Queue" || probs[0].Object != "broken" || !strings.Contains(probs[0].Field, "volcano.sh/card.quota") {
		t.Errorf("problems = %+v", probs)
	}
	g := c.PodGroup("team", "job")
	if g == nil || g.Queue != "default" || g.MinMember != 2 || g.Phase != "Pending" || g.CardRequest["A|B"] != 2 {
		t.Errorf("podgroup = %+v", g)
	}
	// The snapshot writer keeps them, with their own apiVersion and kind.
	var buf bytes.Buffer
	if err := s.WriteList(&buf, "yaml"); err != nil {
		t.Fatal(err)
	}
	again, err := Parse(buf.Bytes(), "again.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Queues) != 2 || len(again.PodGroups) != 1 || again.Queues[0].GetAnnotations()["volcano.sh/card.quota"] != `{"NVIDIA-H200":3}` {
		t.Errorf("round trip lost Volcano objects:\n%s", buf.String())
	}
}
