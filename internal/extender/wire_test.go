package extender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// wireStrings are the strings whose encoding differs between JSON encoders: HTML characters, control
// characters, invalid UTF-8, U+2028/U+2029, quotes and backslashes, multi-byte text.
var wireStrings = []string{"", "node-1", "a<b>&c", "tab\there\nnl\r\b\f\x00\x1f", "bad \xff utf8 \xe2\x82", "line\u2028sep\u2029", `q"uo\te`, "ünïcödé ✓ 日本", "0/5 nodes: Insufficient nvidia.com/gpu"}

func randomWireString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(4) {
		b.WriteString(wireStrings[r.IntN(len(wireStrings))])
	}
	return b.String()
}

// TestWireEncodingMatchesEncodingJSON: the hand-written answers are the bytes encoding/json writes for the
// same values, including every string it escapes, nil and empty maps and lists.
func TestWireEncodingMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		res := extenderv1.ExtenderFilterResult{Error: randomWireString(r)}
		if i%3 != 0 {
			res.FailedNodes = extenderv1.FailedNodesMap{}
			for range r.IntN(6) {
				res.FailedNodes[randomWireString(r)] = randomWireString(r)
			}
		}
		if i%4 != 0 {
			res.FailedAndUnresolvableNodes = extenderv1.FailedNodesMap{}
			for range r.IntN(3) {
				res.FailedAndUnresolvableNodes[randomWireString(r)] = randomWireString(r)
			}
		}
		if i%5 != 0 {
			names := []string{}
			for range r.IntN(5) {
				names = append(names, randomWireString(r))
			}
			res.NodeNames = &names
		}
		if i%50 == 1 {
			res.Nodes = &corev1.NodeList{Items: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: randomWireString(r)}}}}
		}
		got, err := appendFilterResult(nil, &res)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(res)
		if !bytes.Equal(got, want) {
			t.Fatalf("filter result\n got %s\nwant %s", got, want)
		}
		var list extenderv1.HostPriorityList
		if i%7 != 0 {
			list = extenderv1.HostPriorityList{}
			for range r.IntN(5) {
				list = append(list, extenderv1.HostPriority{Host: randomWireString(r), Score: r.Int64N(21) - 10})
			}
		}
		want, _ = json.Marshal(list)
		if got := appendPriorities(nil, list); !bytes.Equal(got, want) {
			t.Fatalf("priorities\n got %s\nwant %s", got, want)
		}
	}
}

// TestWireRoundTripOverWorlds: over generated worlds, each pending pod's filter and prioritize requests
// decode as encoding/json decodes them, and the handlers' answers are byte for byte encoding/json's
// encoding of what they say.
func TestWireRoundTripOverWorlds(t *testing.T) {
	first, n := worldgen.Seeds(40)
	calls := 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{})
		state := NewState(engine.DefaultConfig())
		now := worldgen.Epoch.Add(10 * time.Minute)
		var names []string
		for _, node := range w.Nodes {
			state.SetNode(node)
			names = append(names, node.Name)
		}
		for _, p := range w.Pods.Slice() {
			state.SetPod(p, now)
		}
		state.SetSynced()
		srv := NewServer(state, nil, Options{}, nil, func() time.Time { return now })
		h := srv.Handler()
		for _, p := range w.Pods.Slice() {
			if p.Spec.NodeName != "" {
				continue
			}
			body, err := json.Marshal(extenderv1.ExtenderArgs{Pod: p, NodeNames: &names})
			if err != nil {
				t.Fatal(err)
			}
			var got, want extenderv1.ExtenderArgs
			if err := parseArgs(body, &got); err != nil {
				t.Fatalf("seed %d pod %s: %v", seed, p.Name, err)
			}
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d pod %s: decoded args differ from encoding/json's", seed, p.Name)
			}
			var res extenderv1.ExtenderFilterResult
			answer := wirePost(t, h, "/filter", body, &res)
			if res.NodeNames == nil {
				t.Fatalf("seed %d pod %s: no NodeNames in %s", seed, p.Name, answer)
			}
			wireSame(t, answer, res)
			body, _ = json.Marshal(extenderv1.ExtenderArgs{Pod: p, NodeNames: res.NodeNames})
			var prio extenderv1.HostPriorityList
			wireSame(t, wirePost(t, h, "/prioritize", body, &prio), prio)
			calls += 2
		}
	}
	if calls == 0 {
		t.Fatal("no pending pod in any world: the generator is broken")
	}
	t.Logf("%d worlds, %d calls", n, calls)
}

func wirePost(t *testing.T, h http.Handler, path string, body []byte, out any) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	answer, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, rec.Code, answer)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		t.Fatalf("POST %s: %v in %s", path, err, answer)
	}
	return answer
}

func wireSame(t *testing.T, answer []byte, v any) {
	t.Helper()
	want, _ := json.Marshal(v)
	if !bytes.Equal(answer, append(want, '\n')) {
		t.Fatalf("answer\n%s\nis not encoding/json's\n%s", answer, want)
	}
}

// FuzzParseArgs: the hand-written decoder accepts what json-iterator (the decoder before it, configured as
// encoding/json) accepts, refuses what it refuses, and reads the same values.
func FuzzParseArgs(f *testing.F) {
	f.Add([]byte(`{"Pod":{"metadata":{"name":"p","namespace":"n"}},"NodeNames":["a","b"]}`))
	f.Add([]byte(`{"pod":null,"nodenames":["a\u0041",null],"Nodes":{"items":[{"metadata":{"name":"x"}}]},"other":[1,{"a":"}"}]}`))
	f.Add([]byte(`{"NodeNames":["a"],"NodeNames":null} `))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"NodeNames":["a"]} x`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want extenderv1.ExtenderArgs
		err := parseArgs(body, &got)
		wantErr := fastJSON.Unmarshal(body, &want)
		if bytes.IndexByte(body, 0) >= 0 {
			wantErr = fmt.Errorf("NUL")
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, json-iterator's %v", body, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %+v, json-iterator %+v", body, got, want)
		}
		// The names, which the hand scanner reads (the pod and Nodes go to json-iterator), are encoding/json's.
		var std extenderv1.ExtenderArgs
		if err == nil && json.Unmarshal(body, &std) == nil && !reflect.DeepEqual(got.NodeNames, std.NodeNames) {
			t.Fatalf("%q: NodeNames %v, encoding/json %v", body, got.NodeNames, std.NodeNames)
		}
		// The same into a kept array (the pooled one of the handlers), with room for two names.
		var again extenderv1.ExtenderArgs
		if err2 := parseArgsInto(body, &again, make([]string, 1, 2)); (err2 == nil) != (err == nil) || err == nil && !reflect.DeepEqual(again, got) {
			t.Fatalf("%q: into a kept array %+v (%v), without %+v (%v)", body, again, err2, got, err)
		}
	})
}

// TestDecodedPodOwnsItsStrings: the request body is a pooled buffer, reused once the handler returns; the
// decoded pod (which the recent verdict, the events and the preemptor keep) must hold no view of it.
func TestDecodedPodOwnsItsStrings(t *testing.T) {
	first, n := worldgen.Seeds(20)
	pods := 0
	for seed := first; seed < first+uint64(n); seed++ {
		for _, p := range worldgen.World(seed, worldgen.Options{Kube: true}).Pods.Slice() {
			body, err := json.Marshal(extenderv1.ExtenderArgs{Pod: p, NodeNames: &[]string{"a", "b"}})
			if err != nil {
				t.Fatal(err)
			}
			var args extenderv1.ExtenderArgs
			if err := parseArgs(body, &args); err != nil {
				t.Fatal(err)
			}
			before := args.Pod.DeepCopy()
			for i := range body {
				body[i] = 'x'
			}
			if !reflect.DeepEqual(args.Pod, before) {
				t.Fatalf("seed %d pod %s: the decoded pod changed with the body it was read from", seed, p.Name)
			}
			pods++
		}
	}
	if pods == 0 {
		t.Fatal("no pod in any world")
	}
}
