package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestLiveCluster runs the read commands in-process against a real kube-apiserver (and etcd) that holds the
// objects of the embedded demo cluster, and checks that reading them live gives the answers the demo gives.
func TestLiveCluster(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	began := time.Now()
	counts := loadDemo(t, env.Client)
	queues, groups := loadDemoVolcano(t, env)
	t.Logf("loaded the demo cluster (%s, %d Volcano queues, %d PodGroups) in %s", counts, queues, groups, time.Since(began).Round(time.Millisecond))

	kc := env.Kubeconfig
	server := env.APIServerURL
	live := func(t *testing.T, args ...string) string {
		t.Helper()
		args = append(args, "--kubeconfig", kc)
		out, errOut, err := runB(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\nstderr:\n%s", args, err, errOut)
		}
		// The demo's gpu-t4-03 registers in the 9-field text, which HAMi v2.10 does not read: that warning is
		// expected; anything else on stderr is not.
		var unexpected []string
		for _, l := range strings.Split(strings.TrimRight(errOut, "\n"), "\n") {
			if l != "" && !strings.Contains(l, "Node gpu-t4-03: metadata.annotations[hami.io/node-nvidia-register]: registered in the text-9 text form") {
				unexpected = append(unexpected, l)
			}
		}
		if len(unexpected) > 0 {
			t.Errorf("%v wrote to stderr:\n%s", args, strings.Join(unexpected, "\n"))
		}
		return out
	}
	demo := func(t *testing.T, args ...string) string {
		t.Helper()
		args = append(args, "--demo")
		out, errOut, err := runB(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\nstderr:\n%s", args, err, errOut)
		}
		return out
	}

	t.Run("top tables match the demo", func(t *testing.T) {
		got, want := live(t, "top"), demo(t, "top")
		if h := firstLine(got); !strings.HasPrefix(h, "Source: cluster "+server+" ") {
			t.Errorf("header %q does not name the cluster %s", h, server)
		}
		// The counts after the source are the same as the demo's.
		if g, w := afterSource(firstLine(got)), afterSource(firstLine(want)); g != w {
			t.Errorf("header counts differ:\n live: %s\n demo: %s", g, w)
		}
		for _, sec := range []string{"NODES", "NAMESPACE QUOTAS", "QUEUE CARD QUOTAS"} {
			g, w := section(got, sec), section(want, sec)
			if g == "" {
				t.Fatalf("live top has no %s table:\n%s", sec, got)
			}
			if g != w {
				t.Errorf("%s table differs from the demo's:\n live:\n%s\n demo:\n%s", sec, g, w)
			}
		}
		// Pending pods: the same rows and reasons; only AGE differs (the apiserver stamped the pods now).
		g, w := dropColumn(section(got, "PENDING GPU PODS"), 3), dropColumn(section(want, "PENDING GPU PODS"), 3)
		if g != w {
			t.Errorf("PENDING GPU PODS differ from the demo's (AGE left out):\n live:\n%s\n demo:\n%s", g, w)
		}
	})

	t.Run("top -o wide GPUS table matches the demo", func(t *testing.T) {
		g, w := section(live(t, "top", "-o", "wide"), "GPUS"), section(demo(t, "top", "-o", "wide"), "GPUS")
		if g == "" || g != w {
			t.Errorf("GPUS table differs from the demo's:\n live:\n%s\n demo:\n%s", g, w)
		}
	})

	t.Run("-n checked against the API server", func(t *testing.T) {
		// top -n limits to the namespace as on the demo.
		if g, w := live(t, "top", "-n", "inference", "-o", "name"), demo(t, "top", "-n", "inference", "-o", "name"); g != w || g == "" {
			t.Errorf("top -n inference -o name: live %q, demo %q", g, w)
		}
		// A namespace that does not exist is refused with the closest names.
		_, _, err := runB(t, "top", "-n", "infrence", "--once", "--kubeconfig", kc)
		if err == nil || !strings.Contains(err.Error(), `-n "infrence": no namespace infrence in cluster `) || !strings.Contains(err.Error(), `did you mean "inference"?`) {
			t.Errorf("top -n infrence: %v", err)
		}
		// One that exists, empty, is fine (the snapshot does not know it: the API server does).
		if _, err := env.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "inferenc"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := live(t, "top", "-n", "inferenc", "-o", "name"); out != "" {
			t.Errorf("top -n inferenc (empty) printed %q", out)
		}
	})

	t.Run("top -o json", func(t *testing.T) {
		var top struct {
			Kind    string            `json:"kind"`
			Source  string            `json:"source"`
			Nodes   []json.RawMessage `json:"nodes"`
			Pending []PendingPod      `json:"pending"`
		}
		out := live(t, "top", "-o", "json")
		if err := json.Unmarshal([]byte(out), &top); err != nil {
			t.Fatalf("top -o json does not parse: %v\n%s", err, out)
		}
		if top.Kind != "Top" || top.Source != "cluster "+server {
			t.Errorf("kind %q source %q, want Top and cluster %s", top.Kind, top.Source, server)
		}
		if len(top.Nodes) != 11 || len(top.Pending) != 8 {
			t.Errorf("got %d nodes and %d pending pods, want 9 and 7", len(top.Nodes), len(top.Pending))
		}
		var names []string
		for _, p := range top.Pending {
			names = append(names, p.Namespace+"/"+p.Name+":"+p.Reason)
		}
		sort.Strings(names)
		joined := strings.Join(names, "\n")
		for _, w := range []string{"inference/llm-serve-2:ResourceQuotaNotFit", "ml-research/pretrain-2:CardInsufficientMemory", "team-vision/mig-large:ResourceQuotaNotFit"} {
			if !strings.Contains(joined, w) {
				t.Errorf("pending pods lack %q:\n%s", w, joined)
			}
		}
	})

	t.Run("why-pending quota with the live event", func(t *testing.T) {
		got := live(t, "why-pending", "llm-serve-2", "-n", "inference")
		for _, w := range []string{
			"Pod inference/llm-serve-2 is Pending and not bound to a node.",
			"ResourceQuotaNotFit      2       gpu-h100-01 GPU 0: pod needs 24000 MiB, 3712 of 64000 MiB left (limits.nvidia.com/gpumem in ResourceQuota gpu-quota)",
			"namespace inference has 3712 MiB of limits.nvidia.com/gpumem left (used 60288 of 64000, ResourceQuota gpu-quota)",
			"Recent events:",
			// Live() lists no events: this row comes from snapshot.AddPodEvents reading the apiserver.
			"20m         FailedScheduling   hami-scheduler   12      0/11 nodes are available: 1 NodeDevicesNotReady, 2 NodeInsufficientDevice, 2 NodeUnregistered, 2 ResourceQuotaNotFit, 4 CardTypeMismatch.",
		} {
			if !strings.Contains(got, w) {
				t.Errorf("why-pending llm-serve-2 lacks %q:\n%s", w, got)
			}
		}
		if want := demo(t, "why-pending", "llm-serve-2", "-n", "inference"); got != want {
			t.Errorf("live answer differs from the demo's: %s", diff(want, got))
		}
	})

	t.Run("why-pending card quota from live Volcano queues", func(t *testing.T) {
		got := live(t, "why-pending", "reranker-0", "-n", "inference")
		for _, w := range []string{
			"0/11 nodes are available: 1 NodeDevicesNotReady, 2 NodeUnregistered, 2 QueueCardQuotaNotFit, 6 CardModelNotRequested.",
			"QueueCardQuotaNotFit    2       gpu-h100-01: queue serving: NVIDIA-H100-80GB-HBM3 2 of 2 used, the pod needs 1",
			"Card quota (Volcano queue serving, volcano.sh/card.quota), in whole cards:",
			// Raising the card quota alone is proven not enough: the namespace quota decides next.
			"raise queue serving's card quota for NVIDIA-H100-80GB-HBM3 (Queue serving metadata.annotations[volcano.sh/card.quota][NVIDIA-H100-80GB-HBM3]: 2 -> 3) is not enough: then ResourceQuotaNotFit on gpu-h100-01",
		} {
			if !strings.Contains(got, w) {
				t.Errorf("why-pending reranker-0 lacks %q:\n%s", w, got)
			}
		}
		// Events are stamped differently live; everything above them is the demo's answer.
		cut := func(s string) string { before, _, _ := strings.Cut(s, "Recent events:"); return before }
		if want := demo(t, "why-pending", "reranker-0", "-n", "inference"); cut(got) != cut(want) {
			t.Errorf("live answer differs from the demo's: %s", diff(cut(want), cut(got)))
		}
	})

	t.Run("what-if with a card alternative and a queue", func(t *testing.T) {
		args := []string{"what-if", "-n", "inference", "--gpus", "1", "--gpumem", "3000", "--card", "NVIDIA-H100-80GB-HBM3|NVIDIA-A100-SXM4-80GB", "--queue", "serving", "--count", "3"}
		got := live(t, args...)
		for _, w := range []string{
			"best: gpu-a100-01",
			"NVIDIA-A100-SXM4-80GB   nvidia.com/gpu   0      1       1           2       fits",
			"Copies: 1 fit now (gpu-a100-01: 1); 3 wanted: 2 would wait.",
		} {
			if !strings.Contains(got, w) {
				t.Errorf("what-if --card lacks %q:\n%s", w, got)
			}
		}
		if want := demo(t, args...); got != want {
			t.Errorf("live answer differs from the demo's: %s", diff(want, got))
		}
	})

	t.Run("why-pending -o json", func(t *testing.T) {
		out := live(t, "why-pending", "pretrain-2", "-n", "ml-research", "-o", "json")
		var wp WhyPending
		if err := json.Unmarshal([]byte(out), &wp); err != nil {
			t.Fatalf("why-pending -o json does not parse into WhyPending: %v\n%s", err, out)
		}
		if wp.Kind != "WhyPending" || wp.Pod != "ml-research/pretrain-2" || wp.Phase != "Pending" {
			t.Errorf("kind %q pod %q phase %q", wp.Kind, wp.Pod, wp.Phase)
		}
		if wp.Verdict == nil || wp.Verdict.Fits {
			t.Fatalf("verdict %+v, want one that does not fit", wp.Verdict)
		}
		if len(wp.Verdict.Nodes()) != 11 {
			t.Errorf("verdict covers %d nodes, want 9", len(wp.Verdict.Nodes()))
		}
		if len(wp.Events) != 1 || wp.Events[0].Reason != "FailedScheduling" || wp.Events[0].Count != 12 {
			t.Errorf("events %+v, want the one FailedScheduling event (count 12)", wp.Events)
		}
	})

	t.Run("why-pending on a running pod", func(t *testing.T) {
		got := live(t, "why-pending", "finetune-a", "-n", "ml-research")
		if !strings.Contains(got, "Pod ml-research/finetune-a is not pending: it is Running on node gpu-a100-02.") {
			t.Errorf("unexpected answer:\n%s", got)
		}
		if want := demo(t, "why-pending", "finetune-a", "-n", "ml-research"); got != want {
			t.Errorf("live answer differs from the demo's: %s", diff(want, got))
		}
	})

	t.Run("why-pending on a missing pod", func(t *testing.T) {
		cases := []struct {
			pod, ns string
			want    []string
		}{
			{"nosuchpod", "inference", []string{"pod inference/nosuchpod not found in cluster " + server}},
			{"llm-srve-2", "inference", []string{"pod inference/llm-srve-2 not found", "did you mean inference/llm-serve-2"}},
			{"pretrain-2", "inference", []string{"a pod of that name is in ml-research/pretrain-2 (use -n)"}},
			{"x", "nope", []string{"namespace nope has no pods"}},
		}
		for _, tc := range cases {
			_, _, err := runB(t, "why-pending", tc.pod, "-n", tc.ns, "--kubeconfig", kc)
			if err == nil {
				t.Errorf("why-pending %s -n %s: no error", tc.pod, tc.ns)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("why-pending %s -n %s: error %q lacks %q", tc.pod, tc.ns, err, w)
				}
			}
		}
	})

	t.Run("what-if -o json fits", func(t *testing.T) {
		args := []string{"what-if", "--gpus", "1", "--gpumem", "8000", "-n", "team-vision", "-o", "json"}
		out := live(t, args...)
		var wi WhatIf
		if err := json.Unmarshal([]byte(out), &wi); err != nil {
			t.Fatalf("what-if -o json does not parse into WhatIf: %v\n%s", err, out)
		}
		if wi.Kind != "WhatIf" || wi.Verdict == nil || !wi.Verdict.Fits || wi.Verdict.Placement == nil {
			t.Fatalf("kind %q verdict %+v, want a placement", wi.Kind, wi.Verdict)
		}
		if wi.Verdict.Quota.Namespace != "team-vision" {
			t.Errorf("quota namespace %q, want team-vision", wi.Verdict.Quota.Namespace)
		}
		// The same answer as on the demo, but for the order of "kubernetes" (see TestKubeChecksJSONOrder).
		if g, w := sortKubeChecks(t, out), sortKubeChecks(t, demo(t, args...)); g != w {
			t.Errorf("live answer differs from the demo's: %s", diff(w, g))
		}
	})

	t.Run("snapshot round trip", func(t *testing.T) {
		out := live(t, "snapshot", "-o", "json")
		path := filepath.Join(t.TempDir(), "live.json")
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		fromFile, errOut, err := runB(t, "top", "--snapshot", path)
		if err != nil {
			t.Fatalf("top --snapshot: %v\n%s", err, errOut)
		}
		if h := firstLine(fromFile); !strings.HasPrefix(h, "Source: file "+path+" ") {
			t.Errorf("header %q does not name the file", h)
		}
		fromCluster := live(t, "top")
		if g, w := section(fromFile, "NODES"), section(fromCluster, "NODES"); g == "" || g != w {
			t.Errorf("NODES from the saved snapshot differ from the cluster's:\n file:\n%s\n cluster:\n%s", g, w)
		}
		// Everything after the header, ages included (the file keeps the creation times), is the same.
		if g, w := afterFirstLine(fromFile), afterFirstLine(fromCluster); g != w {
			t.Errorf("top from the saved snapshot differs from the cluster's: %s", diff(w, g))
		}
		// The pods' events are kept: why-pending from the file shows the FailedScheduling events the cluster has.
		countEvents := func(list string) int {
			var saved struct{ Items []struct{ Kind string } }
			if err := json.Unmarshal([]byte(list), &saved); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, it := range saved.Items {
				if it.Kind == "Event" {
					n++
				}
			}
			return n
		}
		if events := countEvents(out); events != counts.Events {
			t.Errorf("the snapshot keeps %d events, the cluster has %d about its pods", events, counts.Events)
		}
		args := []string{"why-pending", "mig-large", "-n", "team-vision", "-o", "json"}
		fileAnswer, errOut, err := runB(t, append(args, "--snapshot", path)...)
		if err != nil {
			t.Fatalf("why-pending --snapshot: %v\n%s", err, errOut)
		}
		var fromEvents WhyPending
		if err := json.Unmarshal([]byte(fileAnswer), &fromEvents); err != nil {
			t.Fatal(err)
		}
		if len(fromEvents.Events) == 0 || fromEvents.Events[0].Reason != "FailedScheduling" {
			t.Errorf("why-pending from the snapshot shows events %+v, want the pod's FailedScheduling", fromEvents.Events)
		}
		if g, w := fileAnswer, live(t, args...); g != w {
			t.Errorf("why-pending from the saved snapshot differs from the cluster's: %s", diff(w, g))
		}
		// --events=false leaves them out.
		if n := countEvents(live(t, "snapshot", "-o", "json", "--events=false")); n != 0 {
			t.Errorf("snapshot --events=false keeps %d events", n)
		}
	})

	t.Run("namespace from the kubeconfig context", func(t *testing.T) {
		dir := t.TempDir()
		withNS := writeKubeconfig(t, filepath.Join(dir, "inference"), server, env.Token, "inference")
		got, errOut, err := runB(t, "why-pending", "llm-serve-2", "--kubeconfig", withNS)
		if err != nil {
			t.Fatalf("why-pending without -n, context namespace inference: %v\n%s", err, errOut)
		}
		if !strings.HasPrefix(got, "Pod inference/llm-serve-2 is Pending") {
			t.Errorf("unexpected answer:\n%s", got)
		}
		// -n wins over the context's namespace.
		got, errOut, err = runB(t, "why-pending", "pretrain-2", "-n", "ml-research", "--kubeconfig", withNS)
		if err != nil || !strings.HasPrefix(got, "Pod ml-research/pretrain-2 is Pending") {
			t.Errorf("-n ml-research with context namespace inference: %v\n%s%s", err, got, errOut)
		}
		// what-if takes the namespace (and so the quota) from the context too.
		out, errOut, err := runB(t, "what-if", "--gpus", "1", "--gpumem", "8000", "-o", "json", "--kubeconfig", withNS)
		if err != nil {
			t.Fatalf("what-if without -n: %v\n%s", err, errOut)
		}
		var wi WhatIf
		if err := json.Unmarshal([]byte(out), &wi); err != nil {
			t.Fatal(err)
		}
		if wi.Verdict == nil || wi.Verdict.Quota.Namespace != "inference" {
			t.Errorf("what-if without -n evaluated in namespace %q, want inference", wi.Verdict.Quota.Namespace)
		}
		// The testenv kubeconfig's context says "default": the pod is not there, and the error says where it is.
		_, _, err = runB(t, "why-pending", "llm-serve-2", "--kubeconfig", kc)
		if err == nil || !strings.Contains(err.Error(), "pod default/llm-serve-2 not found") || !strings.Contains(err.Error(), "inference/llm-serve-2 (use -n)") {
			t.Errorf("why-pending in context namespace default: %v", err)
		}
		// A context without a namespace means "default".
		noNS := writeKubeconfig(t, filepath.Join(dir, "none"), server, env.Token, "")
		_, _, err = runB(t, "why-pending", "llm-serve-2", "--kubeconfig", noNS)
		if err == nil || !strings.Contains(err.Error(), "pod default/llm-serve-2 not found") {
			t.Errorf("why-pending with no context namespace: %v", err)
		}
	})

	t.Run("unreachable server", func(t *testing.T) {
		dir := t.TempDir()
		// A closed port: connection refused, at once.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closedURL := "https://" + l.Addr().String()
		l.Close()
		// A port that accepts connections and never answers: only --request-timeout ends the wait.
		hang, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var conns sync.WaitGroup
		var held []net.Conn
		var mu sync.Mutex
		conns.Add(1)
		go func() {
			defer conns.Done()
			for {
				c, err := hang.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		defer func() {
			hang.Close()
			conns.Wait()
			for _, c := range held {
				c.Close()
			}
		}()
		hangURL := "https://" + hang.Addr().String()

		const timeout = 2 * time.Second
		every := [][]string{{"top"}, {"why-pending", "llm-serve-2", "-n", "inference"}, {"what-if", "--gpus", "1"}, {"snapshot"}}
		for _, tc := range []struct {
			name, url string
			cmds      [][]string
		}{{"closed port", closedURL, every}, {"silent server", hangURL, every[:1]}} {
			k := writeKubeconfig(t, filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")), tc.url, "t", "")
			for _, args := range tc.cmds {
				start := time.Now()
				_, _, err := runB(t, append(args, "--kubeconfig", k, "--request-timeout", timeout.String())...)
				took := time.Since(start)
				if err == nil {
					t.Errorf("%s: %v: no error", tc.name, args)
					continue
				}
				if !strings.Contains(err.Error(), "cannot list nodes from the cluster at "+tc.url) {
					t.Errorf("%s: %v: error %q does not name the server %s", tc.name, args, err, tc.url)
				}
				if took > timeout+3*time.Second {
					t.Errorf("%s: %v: failed after %s, want within the %s request timeout", tc.name, args, took.Round(time.Millisecond), timeout)
				}
			}
		}
	})
}

// writeKubeconfig writes a kubeconfig for server with a bearer token, TLS verification off, and the
// given namespace in its only context.
func writeKubeconfig(t *testing.T, path, server, token, namespace string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: namespace}
	kc.CurrentContext = "x"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func afterFirstLine(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}

// afterSource is top's header without its "Source: ..." part: "Nodes: 9   GPUs: ...".
func afterSource(header string) string {
	if i := strings.Index(header, "Nodes: "); i >= 0 {
		return header[i:]
	}
	return header
}

// section is the table under a top heading line that starts with title, up to the next blank line.
func section(out, title string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, title) {
			continue
		}
		var b strings.Builder
		for _, r := range lines[i+1:] {
			if strings.TrimSpace(r) == "" {
				break
			}
			b.WriteString(r)
			b.WriteByte('\n')
		}
		return b.String()
	}
	return ""
}

// dropColumn removes the n-th (0-based) whitespace-separated field of every line and joins the fields
// with single spaces, so that rows compare without one column and its width.
func dropColumn(table string, n int) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		f := strings.Fields(l)
		if n < len(f) {
			f = append(f[:n:n], f[n+1:]...)
		}
		b.WriteString(strings.Join(f, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// sortKubeChecks re-encodes a what-if or why-pending JSON answer with its "kubernetes" results sorted by node.
func sortKubeChecks(t *testing.T, out string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if ks, ok := m["kubernetes"].([]any); ok {
		sort.SliceStable(ks, func(i, j int) bool {
			return ks[i].(map[string]any)["node"].(string) < ks[j].(map[string]any)["node"].(string)
		})
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// TestKubeChecksJSONOrder pins that the "kubernetes" results of -o json come in node-name order, like
// verdict.nodes, whatever order the snapshot lists its nodes in. Today they follow the input order (the
// file's order for --demo/--snapshot, name order from the apiserver), so the same cluster read live and from
// the demo file gives different JSON.
func TestKubeChecksJSONOrder(t *testing.T) {
	for _, args := range [][]string{
		{"what-if", "--gpus", "1", "--gpumem", "8000", "-n", "team-vision", "-o", "json", "--demo"},
		{"why-pending", "llm-serve-2", "-n", "inference", "-o", "json", "--demo"},
	} {
		out, errOut, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		var v struct {
			Verdict struct {
				Nodes []struct{ Node string } `json:"nodes"`
			} `json:"verdict"`
			Kubernetes []struct{ Node string } `json:"kubernetes"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		var verdict, kube []string
		for _, n := range v.Verdict.Nodes {
			verdict = append(verdict, n.Node)
		}
		for _, n := range v.Kubernetes {
			kube = append(kube, n.Node)
		}
		if strings.Join(kube, ",") != strings.Join(verdict, ",") {
			t.Errorf("%v: kubernetes lists nodes in the order %v, verdict.nodes in %v", args, kube, verdict)
		}
	}
}
