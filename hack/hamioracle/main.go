// Command hamioracle runs HAMi v2.10.0's own scheduler (webhook, informers, one registration pass, Filter)
// beside kubectl-hami's what-if on seeded random scenarios and prints how often they agree.
// Build it with run.sh, which exports HAMi's tree and points this module at it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/Project-HAMi/HAMi/pkg/device"
	"github.com/Project-HAMi/HAMi/pkg/device/ascend"
	"github.com/Project-HAMi/HAMi/pkg/device/iluvatar"
	"github.com/Project-HAMi/HAMi/pkg/scheduler"
	"github.com/Project-HAMi/HAMi/pkg/scheduler/config"
	"github.com/Project-HAMi/HAMi/pkg/scheduler/policy"
)

func main() {
	var (
		hamiDir = flag.String("hami", "", "the exported HAMi v2.10.0 tree (for the chart's device ConfigMap)")
		kh      = flag.String("kubectl-hami", "", "the kubectl-hami binary")
		fam     = flag.String("family", "nvidia", "device family to generate")
		n       = flag.Int("n", 100, "scenarios")
		seed    = flag.Int64("seed", 1, "first seed; scenario i uses seed+i")
		quota   = flag.Float64("quota", 0, "chance of a ResourceQuota in the pending pod's namespace")
		over    = flag.Bool("overcommit", false, "running pods may hold more than a device registers")
		core    = flag.Bool("core", false, "the core path only: every node registered with a serving device plugin and a handshake, memory percentages within 0-100")
		out     = flag.String("out", "", "directory for each disagreement class's smallest example (cluster.yaml, pod.yaml)")
		verbose = flag.Bool("v", false, "print every disagreement")
		dump    = flag.String("dump", "", "write one JSON line per scenario (both sides' answers) to this file")
		row     = flag.String("row", "", "also print the batch as one row of docs/compatibility.md's table, named this")
		shrink  = flag.Bool("shrink", false, "with -out: make each class's example smaller before writing it")
		rescore = flag.Int("rescore", 4, "extra runs of HAMi's scoring path per scenario: where HAMi walks a map (Ascend's NetworkID and 910C module choice, Vastai's dies), every answer it gave counts")
	)
	flag.Parse()
	quiet()
	coreOnly = *core
	f, ok := families[*fam]
	if !ok {
		fail(fmt.Errorf("unknown family %q", *fam))
	}
	// The chart passes --enable-ascend and --enable-iluvatar when devices.ascend.enabled and
	// devices.iluvatar.enabled are set (charts/hami/templates/scheduler/deployment.yaml:119-124); the batches of
	// those families run HAMi with them, as their users install it.
	hamiFS := flag.NewFlagSet("hami", flag.ContinueOnError)
	ascend.ParseConfig(hamiFS)
	iluvatar.ParseConfig(hamiFS)
	for _, name := range flagsOf(f) {
		if err := hamiFS.Set(name, "true"); err != nil {
			fail(err)
		}
	}
	devCfg, err := renderDeviceConfig(*hamiDir)
	if err != nil {
		fail(err)
	}
	work, err := os.MkdirTemp("", "hamioracle-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	cfgPath := filepath.Join(work, "device-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(devCfg), 0o644); err != nil {
		fail(err)
	}
	// cmd/scheduler's flag defaults and the chart's scheduler name.
	config.SchedulerName = "hami-scheduler"
	config.ForceOverwriteDefaultScheduler = true
	config.NodeSchedulerPolicy = "binpack"
	device.GPUSchedulerPolicy = "spread"

	st := newStats()
	var dumpw io.Writer
	if *dump != "" {
		df, err := os.Create(*dump)
		if err != nil {
			fail(err)
		}
		defer df.Close()
		dumpw = df
	}
	for i := 0; i < *n; i++ {
		s := generate(f, *seed+int64(i), genOptions{quota: *quota, overcommit: *over})
		h, err := runHAMi(s, cfgPath, *rescore)
		if err != nil {
			fail(fmt.Errorf("seed %d: HAMi: %w", s.Seed, err))
		}
		p, err := runProject(s, *kh, devCfg, work)
		if err != nil {
			fail(fmt.Errorf("seed %d: kubectl-hami: %w", s.Seed, err))
		}
		st.compare(s, h, p, *verbose)
		if dumpw != nil {
			var feasible []string
			for _, ns := range h.scores {
				feasible = append(feasible, ns.NodeID)
			}
			sort.Strings(feasible)
			line, _ := json.Marshal(map[string]any{
				"seed": s.Seed, "hamiAdmitted": h.admitted, "hamiRefusal": h.refusal, "hamiFeasible": feasible,
				"hamiTie": keys(h.tie), "hamiFailed": h.failed, "filter": h.filterPick,
				"project": json.RawMessage(compactVerdict(p)),
			})
			fmt.Fprintln(dumpw, string(line))
		}
	}
	st.print(*fam, *n)
	if *row != "" {
		fmt.Printf("\nrow: | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", *row, *n, st.self, st.varied.inverse(), st.webhook, st.fits,
			st.feasible, st.tie, st.devices, st.reasons, st.nodeReasons, st.gpuReasons)
	}
	if *out != "" {
		if *shrink {
			st.shrink(cfgPath, *kh, devCfg, work, *rescore)
		}
		if err := st.writeExamples(*out, devCfg); err != nil {
			fail(err)
		}
	}
}

func quiet() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hamioracle:", err)
	os.Exit(2)
}

// ---- HAMi's side ----

type hamiResult struct {
	admitted   bool
	refusal    string
	fits       bool
	scores     []*policy.NodeScore
	failed     map[string]string
	tie        map[string]bool
	filterPick string
	filterDevs [][]string
	selfCheck  string // empty when Filter agrees with the scoring path
	// alts: every device list the scoring path chose per node over its runs; varied: the runs differed
	// (HAMi ranges over a map somewhere on the path: its own coin, not the project's).
	alts   map[string][][][]string
	varied bool
}

func runHAMi(s *scenario, cfgPath string, rescore int) (*hamiResult, error) {
	cfg, err := config.LoadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	// Fresh device objects (NVIDIA's health bookkeeping lives in them) and a fresh quota cache per scenario.
	if err := config.InitDevicesWithConfig(cfg); err != nil {
		return nil, err
	}
	qm := device.NewQuotaManager()
	qm.Quotas = map[string]*device.DeviceQuota{}

	var objs []runtime.Object
	for _, n := range s.Nodes {
		objs = append(objs, n.DeepCopy())
	}
	for _, p := range s.Pods {
		objs = append(objs, p.DeepCopy())
	}
	for _, q := range s.Quotas {
		objs = append(objs, q.DeepCopy())
	}
	cs := fake.NewClientset(objs...)
	sch, err := scheduler.OracleStart(cs)
	if err != nil {
		return nil, err
	}
	defer sch.Stop()

	res := &hamiResult{failed: map[string]string{}, tie: map[string]bool{}}
	pod, ok, msg, err := scheduler.OracleAdmit(s.Pending.DeepCopy())
	if err != nil {
		return nil, err
	}
	res.admitted, res.refusal = ok, msg
	if !ok {
		return res, nil
	}
	if _, err := cs.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range s.Nodes {
		names = append(names, n.Name)
	}
	scores, failed, err := sch.OracleScore(pod.DeepCopy(), names)
	if err != nil {
		return nil, err
	}
	res.scores, res.failed = scores, failed
	res.fits = len(scores) > 0
	res.alts = map[string][][][]string{}
	res.addRun(scores, pod)
	for i := 0; i < rescore; i++ {
		more, _, err := sch.OracleScore(pod.DeepCopy(), names)
		if err != nil {
			return nil, err
		}
		if len(more) != len(scores) {
			res.varied = true
		}
		res.addRun(more, pod)
	}
	// The real Filter, after the scoring path (Filter takes the pod into HAMi's cache).
	fr, err := sch.OracleFilter(pod.DeepCopy(), names)
	switch {
	case err != nil:
		res.selfCheck = "Filter error: " + err.Error()
	case fr.NodeNames == nil || len(*fr.NodeNames) == 0:
		if res.fits {
			res.selfCheck = "Filter found no node, scoring found some"
		} else if !sameMap(fr.FailedNodes, res.failed) {
			res.selfCheck = fmt.Sprintf("Filter's FailedNodes %v, scoring's %v", fr.FailedNodes, res.failed)
		}
	default:
		res.filterPick = (*fr.NodeNames)[0]
		got, err := cs.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		// HAMi writes an empty list (";") for each other type the node registers (allocateAppContainers's
		// baseTypes, pkg/scheduler/score.go:258-276): where a request placed another type's devices (Ascend's
		// substring rule) both lists are written; the one with devices is Filter's choice.
		for _, key := range device.SupportDevices {
			if v := got.Annotations[key]; v != "" && (res.filterDevs == nil || len(trimDevs(parseDeviceList(v))) > 0) {
				res.filterDevs = parseDeviceList(v)
			}
		}
		switch {
		case !res.fits:
			res.selfCheck = "Filter found a node, scoring none"
		case !res.tie[res.filterPick]:
			res.selfCheck = "Filter's node " + res.filterPick + " is not in the scoring path's best-score set"
		case !res.chose(res.filterPick, res.filterDevs):
			res.selfCheck = fmt.Sprintf("Filter's devices %v, scoring's %v", res.filterDevs, res.devicesOn(res.filterPick))
		}
	}
	return res, nil
}

func resolvePolicy(pod *corev1.Pod) string {
	if v, ok := pod.Annotations["hami.io/node-scheduler-policy"]; ok && v != "" {
		return v
	}
	return config.NodeSchedulerPolicy
}

// addRun adds one run of the scoring path: its best-score nodes to the tie set, its device lists to alts.
func (h *hamiResult) addRun(scores []*policy.NodeScore, pod *corev1.Pod) {
	if len(scores) == 0 {
		return
	}
	l := policy.NodeScoreList{NodeList: append([]*policy.NodeScore{}, scores...), Policy: resolvePolicy(pod)}
	sort.Sort(l)
	best := l.NodeList[len(l.NodeList)-1].Score
	first := len(h.tie) == 0
	tie := map[string]bool{}
	for _, ns := range scores {
		if ns.Score == best {
			tie[ns.NodeID] = true
		}
	}
	if !first && !sameSet(tie, h.tie) {
		h.varied = true
	}
	for n := range tie {
		h.tie[n] = true
	}
	for _, ns := range scores {
		d := devicesOf(ns)
		known := false
		for _, a := range h.alts[ns.NodeID] {
			known = known || sameDevs(a, d)
		}
		if !known {
			if len(h.alts[ns.NodeID]) > 0 {
				h.varied = true
			}
			h.alts[ns.NodeID] = append(h.alts[ns.NodeID], d)
		}
	}
}

// chose: the scoring path chose devs on node in one of its runs.
func (h *hamiResult) chose(node string, devs [][]string) bool {
	for _, a := range h.alts[node] {
		if sameDevs(a, devs) {
			return true
		}
	}
	return false
}

// devicesOn is the scoring path's devices on node in its first run, per container (init containers first),
// UUIDs in order.
func (h *hamiResult) devicesOn(node string) [][]string {
	for _, ns := range h.scores {
		if ns.NodeID == node {
			return devicesOf(ns)
		}
	}
	return nil
}

func devicesOf(ns *policy.NodeScore) [][]string {
	var out [][]string
	types := make([]string, 0, len(ns.Devices))
	for t := range ns.Devices {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		for i, cds := range ns.Devices[t] {
			for len(out) <= i {
				out = append(out, nil)
			}
			for _, cd := range cds {
				out[i] = append(out[i], cd.UUID)
			}
		}
	}
	return trimDevs(out)
}

// parseDeviceList reads HAMi's pod device list: containers split by ';', devices by ':', the UUID first.
func parseDeviceList(s string) [][]string {
	var out [][]string
	if s == "" {
		return nil
	}
	ctrs := strings.Split(s, ";")
	if len(ctrs) > 0 && ctrs[len(ctrs)-1] == "" {
		ctrs = ctrs[:len(ctrs)-1]
	}
	for _, c := range ctrs {
		var ids []string
		for _, d := range strings.Split(c, ":") {
			if id, _, _ := strings.Cut(d, ","); id != "" {
				ids = append(ids, id)
			}
		}
		out = append(out, ids)
	}
	return trimDevs(out)
}

func trimDevs(d [][]string) [][]string {
	for len(d) > 0 && len(d[len(d)-1]) == 0 {
		d = d[:len(d)-1]
	}
	return d
}

func sameDevs(a, b [][]string) bool {
	a, b = trimDevs(a), trimDevs(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return false
		}
	}
	return true
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ---- kubectl-hami's side ----

type projectResult struct {
	WebhookRefusal *struct {
		Message string `json:"message"`
	} `json:"webhookRefusal"`
	Verdict struct {
		Fits      bool `json:"fits"`
		Placement *struct {
			Node       string `json:"node"`
			Containers []struct {
				Init    bool `json:"init"`
				Index   int  `json:"index"`
				Devices []struct {
					UUID string `json:"uuid"`
				} `json:"devices"`
			} `json:"containers"`
			InitContainers int `json:"initContainers"`
		} `json:"placement"`
		Nodes []struct {
			Node   string `json:"node"`
			Fits   bool   `json:"fits"`
			Reason string `json:"reason"`
		} `json:"nodes"`
	} `json:"verdict"`
	raw []byte
}

func (p *projectResult) devices(initContainers int) [][]string {
	if p.Verdict.Placement == nil {
		return nil
	}
	var out [][]string
	for _, c := range p.Verdict.Placement.Containers {
		i := c.Index
		if !c.Init {
			i += initContainers
		}
		for len(out) <= i {
			out = append(out, nil)
		}
		for _, d := range c.Devices {
			out[i] = append(out[i], d.UUID)
		}
	}
	return trimDevs(out)
}

func compactVerdict(p *projectResult) []byte {
	type node struct {
		Node   string `json:"node"`
		Fits   bool   `json:"fits"`
		Reason string `json:"reason,omitempty"`
	}
	v := struct {
		Refused bool   `json:"refused"`
		Fits    bool   `json:"fits"`
		Node    string `json:"node,omitempty"`
		Nodes   []node `json:"nodes"`
	}{Refused: p.WebhookRefusal != nil, Fits: p.Verdict.Fits}
	if p.Verdict.Placement != nil {
		v.Node = p.Verdict.Placement.Node
	}
	for _, n := range p.Verdict.Nodes {
		v.Nodes = append(v.Nodes, node{n.Node, n.Fits, n.Reason})
	}
	b, _ := json.Marshal(v)
	return b
}

func snapshotList(s *scenario, devCfg string) ([]byte, error) {
	items := []any{}
	for _, n := range s.Nodes {
		items = append(items, n)
	}
	for _, p := range s.Pods {
		items = append(items, p)
	}
	for _, q := range s.Quotas {
		items = append(items, q)
	}
	items = append(items, &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hami-scheduler-device"},
		Data:       map[string]string{"device-config.yaml": devCfg},
	})
	return json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
}

func runProject(s *scenario, kh, devCfg, work string) (*projectResult, error) {
	cluster, err := snapshotList(s, devCfg)
	if err != nil {
		return nil, err
	}
	pod, err := json.MarshalIndent(s.Pending, "", "  ")
	if err != nil {
		return nil, err
	}
	cp, pp := filepath.Join(work, "cluster.yaml"), filepath.Join(work, "pod.yaml")
	if err := os.WriteFile(cp, cluster, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(pp, pod, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(kh, "what-if", "-f", pp, "--snapshot", cp, "-o", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil && len(outb) == 0 {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	r := &projectResult{raw: outb}
	if err := json.Unmarshal(outb, r); err != nil {
		return nil, fmt.Errorf("%v: %s", err, outb)
	}
	return r, nil
}

// ---- comparison ----

type metric struct{ agree, total int }

func (m *metric) add(ok bool) {
	m.total++
	if ok {
		m.agree++
	}
}

func (m metric) inverse() metric { return metric{agree: m.total - m.agree, total: m.total} }

func (m metric) String() string {
	if m.total == 0 {
		return "-"
	}
	p := fmt.Sprintf("%.1f", 100*float64(m.agree)/float64(m.total))
	if m.agree == m.total {
		p = "100"
	}
	return fmt.Sprintf("%s %% (%d/%d)", p, m.agree, m.total)
}

type example struct {
	s      *scenario
	count  int
	detail string
	shrunk bool
}

type stats struct {
	webhook, fits, feasible, tie, devices, reasons, nodeReasons, gpuReasons, self, varied metric
	classes                                                                               map[string]*example
}

func newStats() *stats { return &stats{classes: map[string]*example{}} }

var (
	digits  = regexp.MustCompile(`[0-9]+`)
	ctrName = regexp.MustCompile(`in container [^:\s]+`)
)

func (st *stats) record(class, detail string, s *scenario, verbose bool) {
	if verbose {
		fmt.Printf("seed %d: %s: %s\n", s.Seed, class, detail)
	}
	e, ok := st.classes[class]
	if !ok {
		st.classes[class] = &example{s: s, count: 1, detail: detail}
		return
	}
	e.count++
	if s.size() < e.s.size() {
		e.s, e.detail = s, detail
	}
}

func (st *stats) compare(s *scenario, h *hamiResult, p *projectResult, verbose bool) {
	st.self.add(h.selfCheck == "")
	if h.selfCheck != "" {
		st.record("harness: "+digits.ReplaceAllString(h.selfCheck, "#"), h.selfCheck, s, verbose)
	}
	pAdmitted := p.WebhookRefusal == nil
	st.webhook.add(pAdmitted == h.admitted)
	if pAdmitted != h.admitted {
		msg := ""
		if p.WebhookRefusal != nil {
			msg = p.WebhookRefusal.Message
		}
		st.record(fmt.Sprintf("webhook: HAMi admitted=%v (%s), kubectl-hami admitted=%v (%s)", h.admitted, ctrName.ReplaceAllString(h.refusal, "in container C"), pAdmitted, msg),
			fmt.Sprintf("HAMi admitted=%v %q; kubectl-hami admitted=%v %q, fits=%v", h.admitted, h.refusal, pAdmitted, msg, p.Verdict.Fits), s, verbose)
	}
	if !h.admitted {
		return
	}
	st.fits.add(h.fits == p.Verdict.Fits)
	if h.fits != p.Verdict.Fits {
		var hn []string
		for _, ns := range h.scores {
			hn = append(hn, ns.NodeID)
		}
		sort.Strings(hn)
		pn := ""
		if p.Verdict.Placement != nil {
			pn = p.Verdict.Placement.Node
		}
		st.record(fmt.Sprintf("fits: HAMi %v, kubectl-hami %v", h.fits, p.Verdict.Fits),
			fmt.Sprintf("HAMi feasible %v, unfit %v; kubectl-hami placement %q, nodes %s", hn, h.failed, pn, compactVerdict(p)), s, verbose)
	}
	hf := map[string]bool{}
	for _, ns := range h.scores {
		hf[ns.NodeID] = true
	}
	st.varied.add(h.varied)
	pf := map[string]bool{}
	pr := map[string]string{}
	for _, n := range p.Verdict.Nodes {
		if n.Fits {
			pf[n.Node] = true
		} else {
			pr[n.Node] = n.Reason
		}
	}
	st.feasible.add(sameSet(hf, pf))
	if !sameSet(hf, pf) {
		var why []string
		for _, n := range s.Nodes {
			if hf[n.Name] != pf[n.Name] {
				hw, pw := "feasible", "feasible"
				if !hf[n.Name] {
					hw = h.failed[n.Name]
				}
				if !pf[n.Name] {
					pw = pr[n.Name]
				}
				why = append(why, fmt.Sprintf("%s: HAMi %q, kubectl-hami %q", n.Name, hw, pw))
			}
		}
		st.record("feasible node set differs", fmt.Sprintf("HAMi %v, kubectl-hami %v; %s", keys(hf), keys(pf), strings.Join(why, "; ")), s, verbose)
	}
	if h.fits && p.Verdict.Fits && p.Verdict.Placement != nil {
		node := p.Verdict.Placement.Node
		st.tie.add(h.tie[node])
		if !h.tie[node] {
			on := "HAMi: " + h.failed[node]
			for _, ns := range h.scores {
				if ns.NodeID == node {
					on = fmt.Sprintf("HAMi: feasible, score %v", ns.Score)
				}
			}
			st.record("node not in HAMi's best-score set", fmt.Sprintf("kubectl-hami %s (%s), HAMi's best %v", node, on, keys(h.tie)), s, verbose)
		}
		if hf[node] {
			hd := h.devicesOn(node)
			pd := p.devices(len(s.Pending.Spec.InitContainers))
			same := h.chose(node, pd)
			st.devices.add(same)
			if !same {
				st.record("devices differ", fmt.Sprintf("on %s HAMi %v, kubectl-hami %v", node, hd, pd), s, verbose)
			}
		}
	}
	all := true
	for node, hr := range h.failed {
		ok := pr[node] == hr
		st.nodeReasons.add(ok)
		if hr != "node unregistered" && pr[node] != "NodeDevicesNotReady" {
			st.gpuReasons.add(ok)
		}
		if !ok {
			all = false
			class := fmt.Sprintf("reason: HAMi %q, kubectl-hami %q", digits.ReplaceAllString(hr, "#"), digits.ReplaceAllString(pr[node], "#"))
			if hr != "node unregistered" && !strings.HasPrefix(hr, "Node") && !strings.Contains(pr[node], "/") {
				class = fmt.Sprintf("reason: HAMi judges the node's GPUs, kubectl-hami says %q", pr[node])
			}
			if c, ok := codeClass(hr, pr[node]); ok {
				class = c
			}
			st.record(class,
				fmt.Sprintf("%s: HAMi %q, kubectl-hami %q", node, hr, pr[node]), s, verbose)
		}
	}
	for node, r := range pr {
		if _, ok := h.failed[node]; !ok && !hf[node] {
			all = false
			st.nodeReasons.add(false)
			st.record("reason: kubectl-hami names an unfit node HAMi never scored", fmt.Sprintf("%s: %q", node, r), s, verbose)
		}
	}
	st.reasons.add(all)
}

// codeClass names a difference of two GPU-by-GPU reason texts ("1/8 CardNotHealth, 7/8 ...") by its codes: those
// only HAMi gives, those only kubectl-hami gives, and those both give with other counts, so that one rule's
// difference is one class whatever else the node's GPUs say.
func codeClass(hami, project string) (string, bool) {
	h, ok1 := reasonCodes(hami)
	p, ok2 := reasonCodes(project)
	if !ok1 || !ok2 {
		return "", false
	}
	var onlyH, onlyP, counts []string
	for c, n := range h {
		switch m, ok := p[c]; {
		case !ok:
			onlyH = append(onlyH, c)
		case m != n:
			counts = append(counts, c)
		}
	}
	for c := range p {
		if _, ok := h[c]; !ok {
			onlyP = append(onlyP, c)
		}
	}
	sort.Strings(onlyH)
	sort.Strings(onlyP)
	sort.Strings(counts)
	var parts []string
	if len(onlyH) > 0 {
		parts = append(parts, "only HAMi says "+strings.Join(onlyH, "+"))
	}
	if len(onlyP) > 0 {
		parts = append(parts, "only kubectl-hami says "+strings.Join(onlyP, "+"))
	}
	if len(counts) > 0 {
		parts = append(parts, "counts of "+strings.Join(counts, "+")+" differ")
	}
	if len(parts) == 0 {
		return "reason: same codes and counts, another order", true
	}
	return "reason: " + strings.Join(parts, "; "), true
}

// reasonCodes reads "n/m Code, n/m Code" into code -> n.
func reasonCodes(s string) (map[string]string, bool) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ", ") {
		frac, code, ok := strings.Cut(part, " ")
		if !ok || !strings.Contains(frac, "/") {
			return nil, false
		}
		out[code] = frac
	}
	return out, len(out) > 0
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (st *stats) print(fam string, n int) {
	fmt.Printf("family %s, %d scenarios\n\n", fam, n)
	fmt.Println("| check | agreement |")
	fmt.Println("|---|---|")
	fmt.Printf("| harness self-check (Filter's pick and devices = scoring path's best) | %s |\n", st.self)
	fmt.Printf("| HAMi's scoring path gave one answer over its runs (else: map order; every answer counts) | %s |\n", st.varied.inverse())
	fmt.Printf("| webhook verdict | %s |\n", st.webhook)
	fmt.Printf("| fits | %s |\n", st.fits)
	fmt.Printf("| feasible node set | %s |\n", st.feasible)
	fmt.Printf("| node in HAMi's best-score tie set | %s |\n", st.tie)
	fmt.Printf("| same devices, same order | %s |\n", st.devices)
	fmt.Printf("| every unfit node's reason text (per scenario) | %s |\n", st.reasons)
	fmt.Printf("| unfit node reason text (per node) | %s |\n", st.nodeReasons)
	fmt.Printf("| the same, nodes HAMi registered and kubectl-hami does not call NodeDevicesNotReady | %s |\n", st.gpuReasons)
	if len(st.classes) == 0 {
		fmt.Println("\nno disagreements")
		return
	}
	fmt.Println("\ndisagreement classes (count, smallest example's seed):")
	var cs []string
	for c := range st.classes {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return st.classes[cs[i]].count > st.classes[cs[j]].count })
	for _, c := range cs {
		e := st.classes[c]
		fmt.Printf("- %d x %s\n    seed %d: %s\n", e.count, c, e.s.Seed, e.detail)
	}
}

func (st *stats) writeExamples(dir, devCfg string) error {
	for class, e := range st.classes {
		d := filepath.Join(dir, slug(class))
		if err := writeScenario(d, e.s, devCfg); err != nil {
			return err
		}
		expect := fmt.Sprintf("class: %s\nseen: %d scenarios of the batch\nseed: %d%s\nanswers: %s\nrun: kubectl-hami what-if -f pod.yaml --snapshot cluster.yaml -o json\n",
			class, e.count, e.s.Seed, shrunkNote(e), e.detail)
		if err := os.WriteFile(filepath.Join(d, "expect.txt"), []byte(expect), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func shrunkNote(e *example) string {
	if e.shrunk {
		return " (shrunk: nodes, running pods, quotas, containers and annotations removed while the class stays)"
	}
	return ""
}

func writeScenario(d string, s *scenario, devCfg string) error {
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	c, err := snapshotList(s, devCfg)
	if err != nil {
		return err
	}
	p, err := json.MarshalIndent(s.Pending, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d, "cluster.yaml"), c, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d, "pod.yaml"), p, 0o644)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug names a class's directory: its text in lower case, words joined by '-', at most 80 characters.
func slug(class string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(class), "-"), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	return s
}
