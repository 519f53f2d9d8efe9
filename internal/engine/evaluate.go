package engine

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// EvalOptions tune one evaluation. The zero value is a full verdict over every node.
type EvalOptions struct {
	// Now is the evaluation time, used only for the node handshake grace; zero means no grace.
	Now time.Time
	// Nodes restricts the evaluation to these nodes (the extender's candidate list); nil means all.
	Nodes []string
	// DetailNodes get every gate's result per GPU; DetailAll gives it for every node.
	DetailNodes []string
	DetailAll   bool
	// Unranked leaves Verdict.Feasible in name order instead of best first (the extender's filter needs only
	// which nodes fit; sorting thousands of them is its largest single cost).
	Unranked bool
	// Kube picks which of kube-scheduler's own checks (cordon, taints, selector and affinity, resources) are
	// gates of the verdict; the zero value runs them all where the engine answers alone (the commands and the
	// terminal UI), none on the extender's cluster.
	Kube KubeScope

	// probe asks only whether the pod fits anywhere (fitsNow): no rows, no ranking, the walk stops at the first
	// node that fits.
	probe bool
}

// Evaluate decides where the pod fits, or explains with numbers why it does not. It never changes the
// cluster. A pod that is already counted is evaluated as if its own usage were released.
func (c *Cluster) Evaluate(pod *corev1.Pod, opts EvalOptions) *Verdict {
	return c.evaluate(pod, opts, nil)
}

// evaluate is Evaluate; with sum set, a HAMi pod's nodes are answered in sum's rows instead of v.nodes and
// v.Feasible (Summarize), every other path fills v.nodes as Evaluate does.
func (c *Cluster) evaluate(pod *corev1.Pod, opts EvalOptions, sum *Summary) *Verdict {
	req, probs := parseRequest(pod, c.cfg, c.kinds)
	key := pod.Namespace + "/" + pod.Name
	v := &Verdict{Pod: key, Request: req, Quota: c.Quota(pod.Namespace)}
	probs = append(probs, c.problems["Pod/"+key]...)
	probs = append(probs, c.memoryProblems(key, req)...)
	v.Problems = probs
	v.Card = c.cardStatus(pod)
	v.Enqueue = c.podEnqueue(pod)
	sched, hami := c.schedulerOf(pod)
	v.Scheduler = sched
	if !hami {
		return c.evaluateOther(v, pod, opts)
	}
	if !req.WantsGPU() && v.Card != nil {
		return c.evaluateCards(v, opts)
	}
	kube := c.kubeGateFor(pod, opts.Kube)
	if !req.WantsGPU() {
		v.NoGPURequest, v.Fits = true, true
		v.Summary = "the pod asks for no GPU resources that HAMi manages (" + c.cfg.ResourceCountName + ")"
		if kube != nil {
			c.kubeOnly(v, kube, opts)
		}
		return v
	}
	self := c.pods[key].alloc
	f := newFitter(c, req, self, false)
	f.card, f.kube = v.Card, kube
	v.Quota = withoutSelf(v.Quota, self)
	var now nowFunc
	if !opts.Now.IsZero() {
		unix := opts.Now.Unix()
		now = func() int64 { return unix }
	}
	nodes := c.nodeList // the answers name their rows by their nodes
	switch {
	case sum != nil && opts.Nodes != nil:
		nodes, sum.request, sum.pos = c.subsetIndexed(opts.Nodes)
	case opts.Nodes != nil:
		nodes = c.subsetNodes(opts.Nodes)
	}
	if opts.probe {
		v.Fits = c.fitsAnywhere(f, nodes, now)
		return v
	}
	if opts.Nodes == nil {
		nodes = c.sharedNodes() // the answer keeps the list: the next change copies it (nodelist.go)
	}
	// A summary's rows are its answer; a verdict's stand for its statuses until they are read (lazystatus.go).
	var lazy *statusRows
	var rows []NodeBrief // assigned once: the workers' closures copy it instead of sharing it on the heap
	if sum != nil {
		sum.nodes, sum.rows = nodes, make([]NodeBrief, len(nodes))
		rows = sum.rows
	} else {
		lazy = &statusRows{nodeRows: nodeRows{nodes: nodes, rows: make([]NodeBrief, len(nodes))},
			containers: make([]string, len(req.Containers)), unhealthy: make([]Code, len(req.Containers))}
		for i := range req.Containers {
			lazy.containers[i], lazy.unhealthy[i] = req.Containers[i].Name, c.rows[req.Containers[i].Kind].unhealthy
		}
		v.lazy, rows = lazy, lazy.rows
	}
	full := lazy != nil
	var r rangeResult
	workers := runtime.GOMAXPROCS(0)
	if len(nodes) < parallelMinNodes || workers < 2 {
		r = c.evalRange(f, nodes, 0, len(nodes), rows, full, opts, now, self)
		if full {
			lazy.parts, lazy.starts = []rangeMore{r.more}, []int{0}
		}
	} else {
		// Nodes are independent: split them into contiguous ranges, one per core, and merge the ranges in
		// order, which gives exactly the sequential answer (every tie keeps the earlier node).
		parts := make([]rangeResult, workers)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			lo, hi := len(nodes)*w/workers, len(nodes)*(w+1)/workers
			wf := f
			if w > 0 {
				wf = newFitter(c, req, self, false)
				wf.card, wf.kube = v.Card, kube
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				parts[w] = c.evalRange(wf, nodes, lo, hi, rows, full, opts, now, self)
			}()
		}
		wg.Wait()
		r = parts[0]
		if full {
			lazy.parts, lazy.starts = make([]rangeMore, 1, workers), make([]int, 1, workers)
			lazy.parts[0] = r.more
		}
		for w, p := range parts[1:] {
			// The range's rows index its own outcomes and extras, now after those of the ranges before.
			lo, hi, off := len(nodes)*(w+1)/workers, len(nodes)*(w+2)/workers, uint32(len(r.outcomes))
			for i := lo; i < hi; i++ {
				if rows[i].outcome > 0 {
					rows[i].outcome += off
				}
			}
			r.merge(p, req.NodePolicy)
			if full {
				lazy.parts, lazy.starts = append(lazy.parts, p.more), append(lazy.starts, lo)
			}
		}
	}
	best, feasible, agg := r.best, r.feasible, r.agg
	if sum != nil {
		sum.outcomes = r.outcomes
	} else {
		lazy.outcomes = r.outcomes
	}
	var bestPlacement []ContainerPlacement
	if best >= 0 {
		// Re-fit the chosen node alone to build its placement: the other nodes never pay for one.
		f.build, f.detail = true, false
		bestPlacement = f.fitNode(nodes[best], make([]GPUStatus, len(nodes[best].GPUs)), now).containers
	}
	v.Reasons = agg.counts()
	if best >= 0 {
		v.Fits = true
		v.Placement = &Placement{Node: nodes[best].Name, Score: r.bestRank.score, Containers: bestPlacement,
			InitContainers: req.InitContainers, AppContainers: req.AppContainers, kinds: c.kinds, podAnnos: pod.Annotations}
		// Best first; equal nodes keep name order. feasible is in name order, so the node index as the last key
		// gives a stable sort's order with pdqsort's cost (a stable sort of thousands of nodes costs several times
		// more). A verdict sorts them when they are read (Verdict.Feasible), a summary now.
		spread := req.NodePolicy == PolicySpread
		if sum != nil {
			if !opts.Unranked {
				sortFeasible(feasible, spread, func(i int) nodeRank { return rows[i].rank() })
			}
			sum.feasible = feasible
		} else {
			v.ranking = &feasibleRanking{nodes: nodes, rows: rows, idx: feasible, unranked: opts.Unranked, spread: spread}
		}
		v.Summary = fmt.Sprintf("%d/%d nodes are available; best: %s (%s policy, score %.2f), GPUs %s",
			len(feasible), len(nodes), nodes[best].Name, req.NodePolicy, r.bestRank.score, placementGPUs(v.Placement))
		return v
	}
	var lines *nodeRows // the rows as the summary line reads them
	if sum != nil {
		lines = &sum.nodeRows
	} else {
		lines = &lazy.nodeRows
	}
	v.Summary = summaryLine(len(nodes), v.Reasons, lines.statusesForSummaryLine(v.Reasons))
	agg.card = v.Card
	v.Explanation = explain(req, &agg, v.Quota)
	if agg.quota != nil {
		v.Explanation = append(v.Explanation, quotaDisagreement(v.Quota)...)
	}
	v.Hints = c.hints(v, &agg)
	if w := req.DeviceWord(); w != "GPU" {
		v.Explanation, v.Hints = inWords(v.Explanation, w), inWords(v.Hints, w)
	}
	return v
}

// fitsNow is Evaluate(pod, opts).Fits: a proven fix's search (fixes.go) asks it many times at every node of
// the cluster and reads nothing else. A HAMi pod's devices are judged without the verdict's rows (probe); the
// other paths (another scheduler's pod, a card-only pod, a pod asking for no device) evaluate whole.
func (c *Cluster) fitsNow(pod *corev1.Pod, opts EvalOptions) bool {
	opts.probe = true
	return c.evaluate(pod, opts, nil).Fits
}

// fitsAnywhere is whether some node of nodes fits f's pod: evalRange's walk without its answers, stopping at
// the first node that fits (which node is best does not change whether one fits).
func (c *Cluster) fitsAnywhere(f *fitter, nodes []*Node, now nowFunc) bool {
	var scratch []GPUStatus
	f.quick = judgeByFacts
	defer func() { f.quick = false }()
	for _, n := range nodes {
		if len(n.GPUs) > len(scratch) {
			scratch = make([]GPUStatus, len(n.GPUs))
		}
		if f.fitNode(n, scratch[:len(n.GPUs)], now).ok {
			return true
		}
	}
	return false
}

// parallelMinNodes is the cluster size from which Evaluate spreads nodes over all cores; smaller clusters
// answer faster on one. A variable so tests can force either path.
var parallelMinNodes = 512

// rangeResult is what evaluating a contiguous range of nodes found.
type rangeResult struct {
	best     int // index of the best feasible node, -1 for none
	bestRank nodeRank
	feasible []int
	agg      aggregate
	outcomes outcomeTable // the rows' codes and texts
	more     rangeMore    // a verdict's extras (lazystatus.go)
}

// merge adds the result of the range that follows r.
func (r *rangeResult) merge(next rangeResult, policy string) {
	if next.best >= 0 && (r.best < 0 || next.bestRank.beats(policy, r.bestRank)) {
		r.best, r.bestRank = next.best, next.bestRank
	}
	r.feasible = append(r.feasible, next.feasible...)
	r.outcomes = append(r.outcomes, next.outcomes...)
	r.agg.merge(&next.agg)
}

// evalRange fits the pod on nodes[lo:hi], filling rows[lo:hi]. Each node's status is built in one reused
// NodeStatus and kept as its row; for a verdict (full) what the row cannot hold goes to the range's extras
// (lazystatus.go), for a summary nowhere (it keeps no example or detail).
func (c *Cluster) evalRange(f *fitter, nodes []*Node, lo, hi int, rows []NodeBrief, full bool, opts EvalOptions, now nowFunc, self *PodAllocation) rangeResult {
	req := f.req
	maxGPUs := 0
	for _, n := range nodes[lo:hi] {
		maxGPUs = max(maxGPUs, len(n.GPUs))
	}
	// One scratch row of GPU results is reused for every node; only nodes asked for in detail keep a copy.
	scratch := make([]GPUStatus, maxGPUs)
	r := rangeResult{best: -1}
	f.quick = judgeByFacts // every failed node's answer below reads res.facts when set
	defer func() { f.quick = false }()
	someDetail := full && (opts.DetailAll || len(opts.DetailNodes) > 0)
	var ns NodeStatus
	for i := lo; i < hi; i++ {
		n := nodes[i]
		detail := someDetail && (opts.DetailAll || containsName(opts.DetailNodes, n.Name))
		f.detail = detail
		st := scratch[:len(n.GPUs)]
		res := f.fitNode(n, st, now)
		ns = NodeStatus{Node: n.Name}
		more := nodeMore{group: -1}
		if detail && res.nodeCheck == nil {
			gpus := append([]GPUStatus(nil), st...)
			identify(n, gpus)
			more.detail = r.more.detail(gpus)
		}
		if res.ok {
			score := 0.0
			if !judgeByFacts || self != nil && self.Node == n.Name {
				score = nodeScore(n, self)
			} else {
				score = c.factsOf(n).score // nodefacts.go: computed once per change of the node
			}
			ns.Fits, ns.Score = true, score+f.familyScore(n)
			if _, rank := f.card.gate(n, f.cardModels); rank > 0 {
				ns.CardRank = rank
			}
			if r.feasible == nil {
				r.feasible = make([]int, 0, hi-i) // at most the rest of the range: one allocation
			}
			r.feasible = append(r.feasible, i)
			if rank := rankOf(&ns); r.best < 0 || rank.beats(req.NodePolicy, r.bestRank) {
				r.best, r.bestRank = i, rank
			}
			rows[i] = r.outcomes.brief(&ns)
			if full {
				r.more.keep(&rows[i], more)
			}
			continue
		}
		switch {
		case res.nodeCheck != nil:
			ns.Code, ns.Check, ns.Reason = res.nodeCheck.Code, res.nodeCheck, string(res.nodeCheck.Code)
			if res.reason != "" {
				ns.Reason = res.reason
			}
			more.check = res.nodeCheck
			r.agg.add(f, n, &ns, st, res)
		case res.facts != nil:
			// The facts judged the container (nodefacts.go): the statuses were not written.
			cr := &f.req.Containers[res.container]
			ns.Container = cr.Name
			more.container = int32(res.container) + 1
			ns.Code, ns.Reason = f.quickReasons(n, res.facts, cr)
			if full {
				if ex, group := quickExample(res.facts, ns.Code, f.c.rows[cr.Kind].unhealthy); ex >= 0 {
					more.gpu, more.group = int32(ex), int8(group)
					more.need, more.have, more.total = quickNumbers(&n.GPUs[ex], cr, group)
				}
			}
			r.agg.addQuick(f, n, &ns, res.facts, cr)
		default:
			ns.Container = req.Containers[res.container].Name
			more.container = int32(res.container) + 1
			ns.Code, ns.Reason = f.gpuReasons(st)
			if res.fitReason != "" {
				ns.Code, ns.Reason = res.fitCode, res.fitReason
			}
			if full {
				if ex := exampleGPU(st, ns.Code); ex >= 0 {
					e := st[ex]
					e.Checks = nil
					e.identify(&n.GPUs[ex])
					more.example = r.more.example(e, hi-i)
				}
			}
			r.agg.add(f, n, &ns, st, res)
		}
		rows[i] = r.outcomes.brief(&ns)
		if full {
			if r.more.more == nil {
				r.more.more = make([]nodeMore, 0, hi-i) // at most the rest of the range: one allocation
			}
			r.more.keep(&rows[i], more)
		}
	}
	return r
}

// withoutSelf is the quota status as the pod being evaluated sees it: its own old usage released.
func withoutSelf(q QuotaStatus, self *PodAllocation) QuotaStatus {
	if self == nil {
		return q
	}
	if q.Memory != nil {
		m := *q.Memory
		m.Used -= self.QuotaMem
		q.Memory = &m
	}
	if q.Cores != nil {
		k := *q.Cores
		k.Used -= self.QuotaCores
		q.Cores = &k
	}
	return q
}

// nodeRank orders feasible nodes (beats): the card alternative preferred by volcano.sh/card.name first, then
// the node policy's score.
type nodeRank struct {
	card  int
	score float64
}

func rankOf(ns *NodeStatus) nodeRank { return nodeRank{ns.CardRank, ns.Score} }

// rankCompare is the feasible list's order: better nodes first (beats), equal ones by their index a and b (name
// order). The policy is read once, as spread or not: the sort calls this thousands of times.
func rankCompare(spread bool, ra, rb nodeRank, a, b int) int {
	switch {
	case ra == rb:
		return a - b
	case ra.card != rb.card:
		if ra.card < rb.card {
			return -1
		}
	case spread:
		if ra.score < rb.score {
			return -1
		}
	case ra.score > rb.score:
		return -1
	}
	return 1
}

// sortFeasible sorts feasible (node indices in ascending order) by rankCompare, comparing one key per node made
// once instead of two ranks per comparison. rankCompare is a total order without NaN scores, so any sort gives
// its one order; with a NaN (where rankCompare finds no order) the comparisons rankCompare makes decide, as
// before.
func sortFeasible(feasible []int, spread bool, rank func(int) nodeRank) {
	bp := rankKeyPool.Get().(*[]rankKey) // the keys and the radix sort's scratch
	defer rankKeyPool.Put(bp)
	if cap(*bp) < 2*len(feasible) {
		*bp = make([]rankKey, 2*len(feasible))
	}
	buf := (*bp)[:2*len(feasible)]
	keys := buf[:len(feasible)]
	sameCard := true
	for k, i := range feasible {
		r := rank(i)
		if r.score != r.score || r.card < math.MinInt32 || r.card > math.MaxInt32 || i > math.MaxInt32 {
			slices.SortFunc(feasible, func(a, b int) int { return rankCompare(spread, rank(a), rank(b), a, b) })
			return
		}
		score := orderedBits64(r.score) // spread: the lowest score first
		if !spread {
			score = ^score
		}
		keys[k] = rankKey{score: score, card: int32(r.card), node: int32(i)}
		sameCard = sameCard && keys[k].card == keys[0].card
	}
	if sameCard {
		keys = radixSortRanks(keys, buf[len(feasible):])
	} else { // a card quota's ranks (rare): compare
		slices.SortFunc(keys, func(a, b rankKey) int {
			switch {
			case a.card != b.card:
				return int(a.card) - int(b.card)
			case a.score != b.score:
				if a.score < b.score {
					return -1
				}
				return 1
			}
			return int(a.node) - int(b.node)
		})
	}
	for k := range keys {
		feasible[k] = int(keys[k].node)
	}
}

// radixSortRanks sorts keys by score, then node, with tmp (as long) as scratch, and returns the sorted slice
// (keys or tmp); every key has the same card. The keys come in node order and each pass is stable, so the
// passes over the score's bytes, lowest first, leave equal scores in node order. All eight histograms are
// counted in one pass; a byte that is the same in every key is skipped.
func radixSortRanks(keys, tmp []rankKey) []rankKey {
	if len(keys) < 2 {
		return keys
	}
	var count [8][256]int32
	for i := range keys {
		s := keys[i].score
		for d := range count {
			count[d][byte(s>>(8*d))]++
		}
	}
	src, dst := keys, tmp
	for d := range count {
		c := &count[d]
		if int(c[byte(src[0].score>>(8*d))]) == len(src) {
			continue
		}
		var pos int32
		for b := range c {
			pos, c[b] = pos+c[b], pos
		}
		shift := uint(8 * d)
		for i := range src {
			b := byte(src[i].score >> shift)
			dst[c[b]] = src[i]
			c[b]++
		}
		src, dst = dst, src
	}
	return src
}

// rankKeyPool holds sortFeasible's buffers between evaluations: a cluster's feasible list is as long each time.
var rankKeyPool = sync.Pool{New: func() any { return new([]rankKey) }}

// rankKey is a feasible node's place in rankCompare's order: card rank, then score as ordered bits, then index.
type rankKey struct {
	score      uint64
	card, node int32
}

// orderedBits64 maps a float64 other than NaN to a uint64 in the same order; -0 and +0 map to one value.
func orderedBits64(v float64) uint64 {
	if v == 0 {
		return 1 << 63
	}
	b := math.Float64bits(v)
	if b&(1<<63) != 0 {
		return ^b
	}
	return b | 1<<63
}

func (a nodeRank) beats(policy string, b nodeRank) bool {
	if a.card != b.card {
		return a.card < b.card
	}
	return better(policy, a.score, b.score)
}

// better reports whether score a beats score b under the node policy; equal scores keep the earlier
// (alphabetically first) node.
func better(policy string, a, b float64) bool {
	if policy == PolicySpread {
		return a < b
	}
	return a > b
}

func (c *Cluster) subset(names []string) ([]*Node, []string) {
	nodes := c.subsetNodes(names)
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = c.nodeNames[n.pos]
	}
	return nodes, out
}

// subsetNodes is subset's nodes without their names.
func (c *Cluster) subsetNodes(names []string) []*Node {
	// Mark the known nodes by position instead of sorting the names: kube-scheduler sends thousands, unsorted.
	mark := make([]bool, len(c.nodeList))
	count := 0
	for _, name := range names {
		if n := c.nodes[name]; n != nil && !mark[n.pos] {
			mark[n.pos] = true
			count++
		}
	}
	nodes := make([]*Node, 0, count)
	for i, m := range mark {
		if m {
			nodes = append(nodes, c.nodeList[i])
		}
	}
	return nodes
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// reasonKey identifies a node's FailedNodes text: the GPU count and up to four (code, count) pairs. Most failed
// nodes of a cluster share a handful of texts ("8/8 CardInsufficientMemory"), so each is built once.
type reasonKey struct {
	gpus, k int
	codes   [4]Code
	counts  [4]int
}

// add counts n devices of code; false when the key holds four other codes already.
func (k *reasonKey) add(code Code, n int) bool {
	for j := 0; j < k.k; j++ {
		if sameCode(k.codes[j], code) {
			k.counts[j] += n
			return true
		}
	}
	if k.k == len(k.codes) {
		return false
	}
	k.codes[k.k], k.counts[k.k] = code, n
	k.k++
	return true
}

// same is k == o, comparing the codes by sameCode.
func (k *reasonKey) same(o *reasonKey) bool {
	if k.gpus != o.gpus || k.k != o.k || k.counts != o.counts {
		return false
	}
	for j := 0; j < k.k; j++ {
		if !sameCode(k.codes[j], o.codes[j]) {
			return false
		}
	}
	return true
}

// sameCode is a == b without a call where both are the same constant (the codes the gates write), which is
// most of the comparisons of a node's devices.
func sameCode(a, b Code) bool {
	return len(a) == len(b) && (unsafe.StringData(string(a)) == unsafe.StringData(string(b)) || a == b)
}

// gpuReasons is gpuReasons through the fitter's cache of texts.
func (f *fitter) gpuReasons(st []GPUStatus) (Code, string) {
	var key reasonKey
	key.gpus = len(st)
	for i := range st {
		s := &st[i]
		code := s.Result.Code
		if code == "" {
			continue
		}
		// What counted gives, without its copies: the result (per instance for set and NUMA), then the
		// MIG walk's second look.
		n := 1
		if s.instances > 1 && (s.Result.Gate == "set" || s.Result.Gate == "numa") {
			n = s.instances
		}
		if !key.add(code, n) || s.again != "" && !key.add(s.again, 1) {
			return gpuReasons(st) // rare: more distinct codes than the key holds
		}
	}
	return f.reasonsFor(key)
}

// reasonsFor is reasonText of a key through the fitter's cache.
func (f *fitter) reasonsFor(key reasonKey) (Code, string) {
	rc := f.reasonCache
	if rc == nil {
		rc = &reasonCache{texts: map[reasonKey]cachedReason{}}
		f.reasonCache = rc
	} else if rc.lastSet && key.same(&rc.lastKey) { // neighbouring nodes mostly fail alike: no hash
		return rc.last.code, rc.last.text
	}
	r, ok := rc.texts[key]
	if !ok {
		r.code, r.text = reasonText(key.codes[:key.k], key.counts[:key.k], key.gpus)
		rc.texts[key] = r
	}
	rc.lastKey, rc.last, rc.lastSet = key, r, true
	return r.code, r.text
}

// reasonCache is the fitter's cache of FailedNodes texts, and the last one looked up.
type reasonCache struct {
	texts   map[reasonKey]cachedReason
	lastKey reasonKey
	last    cachedReason
	lastSet bool
}

// codeCount is a code and how many times HAMi counts it for one device.
type codeCount struct {
	code Code
	n    int
}

// counted is what HAMi's reason map holds for one device: its result (once per instance the walk took, for
// the set and NUMA codes HAMi counts by len(tmpDevs)) and the failure of the MIG walk's second look at it.
func (s *GPUStatus) counted() [2]codeCount {
	n := 1
	if s.instances > 1 && (s.Result.Gate == "set" || s.Result.Gate == "numa") {
		n = s.instances
	}
	out := [2]codeCount{{s.Result.Code, n}}
	if s.again != "" && s.Result.Code != "" {
		out[1] = codeCount{s.again, 1}
	}
	return out
}

type cachedReason struct {
	code Code
	text string
}

// gpuReasons is HAMi's FailedNodes text for a node ("1/8 CardNotHealth, 7/8 CardInsufficientMemory") and
// the node's most common code (ties go to the earlier gate).
func gpuReasons(st []GPUStatus) (Code, string) {
	var codes [16]Code
	var counts [16]int
	k := 0
	for i := range st {
		for _, cw := range st[i].counted() {
			if cw.code == "" {
				continue
			}
			j := 0
			for j < k && codes[j] != cw.code {
				j++
			}
			if j == k {
				if k == len(codes) {
					continue
				}
				codes[k] = cw.code
				k++
			}
			counts[j] += cw.n
		}
	}
	return reasonText(codes[:k], counts[:k], len(st))
}

// reasonText is the FailedNodes text and the most common code of a node of gpus devices whose counted codes
// are codes (distinct, at most 16), counts[j] times each.
func reasonText(codes []Code, counts []int, gpus int) (Code, string) {
	k := len(codes)
	if k == 0 {
		return "", ""
	}
	var parts [16]string
	dom := 0
	var b strings.Builder
	for j := 0; j < k; j++ {
		parts[j] = strconv.Itoa(counts[j]) + "/" + strconv.Itoa(gpus) + " " + string(codes[j])
		if counts[j] > counts[dom] || counts[j] == counts[dom] && GateRank(codes[j]) < GateRank(codes[dom]) {
			dom = j
		}
	}
	if k == 1 {
		return codes[0], parts[0]
	}
	slices.Sort(parts[:k])
	for j := 0; j < k; j++ {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(parts[j])
	}
	return codes[dom], b.String()
}

// summaryLine is kube-scheduler's "0/N nodes are available: ..." with HAMi's codes.
//
// A node that fails one of kube-scheduler's own checks counts each reason of that check in kube-scheduler's
// words (NodeStatus.Reason: "Insufficient cpu, Insufficient memory" counts one of each), as kube-scheduler's
// FailedScheduling message does; a node HAMi's gates refuse counts its code.
func summaryLine(total int, reasons []ReasonCount, nodes []NodeStatus) string {
	if total == 0 {
		return "0/0 nodes are available: the cluster has no nodes."
	}
	parts := make([]string, 0, len(reasons))
	var words map[string]int
	for _, r := range reasons {
		if !IsKubeCheck(r.Code) {
			parts = append(parts, fmt.Sprintf("%d %s", r.Nodes, r.Code))
			continue
		}
		if words == nil {
			words = map[string]int{}
		}
		n := 0
		for i := range nodes {
			if ns := &nodes[i]; ns.Code == r.Code && !ns.Fits && ns.Reason != "" {
				n++
				for _, w := range strings.Split(ns.Reason, ", ") {
					words[w]++
				}
			}
		}
		if n < r.Nodes { // nodes not listed one by one: the check's name stands for them
			parts = append(parts, fmt.Sprintf("%d %s", r.Nodes-n, r.Code))
		}
	}
	for w, n := range words {
		parts = append(parts, fmt.Sprintf("%d %s", n, w))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", total, strings.Join(parts, ", "))
}

// exampleGPU is the index of the GPU that shows the node's deciding code with the most headroom, or -1.
func exampleGPU(st []GPUStatus, code Code) int {
	best := -1
	for i := range st {
		if sameCode(st[i].Result.Code, code) && (best < 0 || st[i].Result.Have > st[best].Result.Have) {
			best = i
		}
	}
	return best
}

func placementGPUs(p *Placement) string {
	var parts []string
	for _, c := range p.Containers {
		var idx []string
		for _, d := range c.Devices {
			idx = append(idx, strconv.Itoa(d.Index))
		}
		parts = append(parts, c.Name+"="+strings.Join(idx, ","))
	}
	return strings.Join(parts, " ")
}
