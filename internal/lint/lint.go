// Package lint finds the silent misconfigurations of HAMi namespace quotas and Volcano card-model quotas:
// settings that Kubernetes accepts, that HAMi or Volcano's capacity-card plugin then ignores or misreads
// without a word. Each finding names the object and the field and says how to fix it. The package is pure:
// it reads a snapshot and the engine's model of it and does no I/O.
package lint

import (
	"fmt"
	"iter"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// Severity says how bad a finding is.
type Severity string

// Severities, worst first. An error means something is denied or ignored for certain; a warning means a
// setting probably does not do what its author meant; info is worth knowing.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Object names the object a finding is about. Kind "Cluster" is a finding about several objects together.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (o Object) String() string {
	if o.Namespace != "" {
		return o.Kind + " " + o.Namespace + "/" + o.Name
	}
	return o.Kind + " " + o.Name
}

// Finding is one misconfiguration.
type Finding struct {
	Severity Severity `json:"severity"`
	Check    string   `json:"check"` // the check that found it, e.g. card-quota-unparsable
	Object   Object   `json:"object"`
	Field    string   `json:"field"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
}

// Check is one named lint check.
type Check struct {
	Name string
	run  func(*input) []Finding
}

// Checks lists every check in the order they run.
var Checks = []Check{
	{"card-quota-unparsable", checkQuotaUnparsable},
	{"card-quota-empty", checkQuotaEmpty},
	{"card-name-unparsable", checkCardNameUnparsable},
	{"card-request-unparsable", checkCardRequestUnparsable},
	{"card-unknown", checkUnknownCards},
	{"card-alternatives-mixed", checkMixedAlternatives},
	{"card-amount-zero", checkCardAmountZero},
	{"card-slots-counted", checkSlotsCounted},
	{"card-labels-incomplete", checkCardLabels},
	{"card-quota-above-physical", checkQuotaAbovePhysical},
	{"card-not-in-queue-quota", checkCardNotInQueueQuota},
	{"queue-missing", checkQueueMissing},
	{"podgroup-missing", checkPodGroupMissing},
	{"quota-key-ignored", checkQuotaKeys},
	{"quota-zero", checkQuotaZero},
	{"gpus-held-unbound", checkGPUsHeldUnbound},
	{"input-unreadable", checkUnreadable},
}

// Run runs every check and returns the findings sorted: errors first, then by object, field and message.
func Run(s *snapshot.Snapshot, c *engine.Cluster, cfg engine.Config) []Finding {
	if s == nil || c == nil {
		return nil
	}
	in := newInput(s, c, cfg)
	var out []Finding
	for _, ch := range Checks {
		for _, f := range ch.run(in) {
			f.Check = ch.Name
			out = append(out, f)
		}
	}
	Sort(out)
	return out
}

// Sort orders findings deterministically: severity, object kind, namespace, name, field, message.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Object.Kind != b.Object.Kind {
			return a.Object.Kind < b.Object.Kind
		}
		if a.Object.Namespace != b.Object.Namespace {
			return a.Object.Namespace < b.Object.Namespace
		}
		if a.Object.Name != b.Object.Name {
			return a.Object.Name < b.Object.Name
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		return a.Message < b.Message
	})
}

// Count returns the number of findings of each severity.
func Count(fs []Finding) (errors, warnings, infos int) {
	for _, f := range fs {
		switch f.Severity {
		case Error:
			errors++
		case Warning:
			warnings++
		default:
			infos++
		}
	}
	return
}

// cardInfo is one card model of the cluster as Volcano's capacity-card plugin names it.
type cardInfo struct {
	resource string
	kind     string
	count    int64    // physical cards (whole cards) or allocatable slices (MIG, MPS)
	nodes    []string // nodes that have it, sorted
}

// input is what every check reads: the snapshot, the engine's model and indexes built once.
type input struct {
	s         *snapshot.Snapshot
	c         *engine.Cluster
	cfg       engine.Config
	cards     map[string]*cardInfo
	labelled  map[string][]string // card model -> nodes whose product label names it, though they have no card
	cardNames []string            // sorted
	queues    map[string]*engine.Queue
	queueList []string // sorted
	groups    map[string]*unstructured.Unstructured
	pods      podList // pods that still count (not Succeeded/Failed), sorted by namespace/name
}

func newInput(s *snapshot.Snapshot, c *engine.Cluster, cfg engine.Config) *input {
	in := &input{s: s, c: c, cfg: c.Config(), cards: map[string]*cardInfo{}, queues: map[string]*engine.Queue{},
		groups: map[string]*unstructured.Unstructured{}}
	if in.cfg.ResourceCountName == "" {
		in.cfg = cfg
	}
	for _, name := range c.NodeNames() {
		n := c.Node(name)
		if n == nil {
			continue
		}
		for _, k := range n.Cards {
			ci := in.cards[k.Name]
			if ci == nil {
				ci = &cardInfo{resource: k.Resource, kind: k.Kind}
				in.cards[k.Name] = ci
				in.cardNames = append(in.cardNames, k.Name)
			}
			ci.count += k.Count
			ci.nodes = append(ci.nodes, name)
		}
	}
	sort.Strings(in.cardNames)
	in.labelled = map[string][]string{}
	for _, n := range s.Nodes {
		if n == nil {
			continue
		}
		if en := c.Node(n.Name); en != nil && en.CardProduct != "" {
			continue
		}
		keys := make([]string, 0, len(n.Labels))
		for k := range n.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first product label in name order, as the engine reads it
		for _, k := range keys {
			v := n.Labels[k]
			if _, _, ok := engine.CardProductLabel(k); ok && strings.TrimSpace(v) != "" {
				in.labelled[strings.TrimSpace(v)] = append(in.labelled[strings.TrimSpace(v)], n.Name)
				break
			}
		}
	}
	for _, nodes := range in.labelled {
		sort.Strings(nodes)
	}
	for _, q := range c.Queues() {
		in.queues[q.Name] = q
		in.queueList = append(in.queueList, q.Name)
	}
	for _, g := range s.PodGroups {
		if g != nil {
			in.groups[g.GetNamespace()+"/"+g.GetName()] = g
		}
	}
	in.pods.of = &s.Pods
	read := s.Pods.Reader()
	for i := range s.Pods.Len() {
		if p := read(i); p == nil || query.Finished(p) {
			continue
		}
		in.pods.order = append(in.pods.order, i)
	}
	sort.SliceStable(in.pods.order, func(i, j int) bool {
		nsI, nameI, _ := s.Pods.Meta(in.pods.order[i])
		nsJ, nameJ, _ := s.Pods.Meta(in.pods.order[j])
		if nsI != nsJ {
			return nsI < nsJ
		}
		return nameI < nameJ
	})
	return in
}

// podList is the pods lint reads, by their positions in the snapshot: each rule's pass builds them one at a
// time (a snapshot read from a file keeps compact records), never all whole at once.
type podList struct {
	of    *snapshot.Pods
	order []int
}

// all yields the pods in order, built into one reused object (snapshot.Pods.Reader): a rule keeps strings of
// a pod, never the pod.
func (l podList) all() iter.Seq[*corev1.Pod] { return l.in("") }

// in is all of the pods in namespace ns ("": every namespace), the others not built.
func (l podList) in(ns string) iter.Seq[*corev1.Pod] {
	return func(yield func(*corev1.Pod) bool) {
		read := l.of.Reader()
		for _, i := range l.order {
			if ns != "" {
				if pns, _, _ := l.of.Meta(i); pns != ns {
					continue
				}
			}
			if !yield(read(i)) {
				return
			}
		}
	}
}

// domain is the vendor domain of the configured GPU count resource ("nvidia.com").
func (in *input) domain() string {
	d, _, _ := strings.Cut(in.cfg.ResourceCountName, "/")
	return d
}

// cardResource is the resource a card maps to: the resource the nodes offer it as, else what its name's
// shape says (MIG, MPS, else the GPU count resource), the way the engine maps it.
func (in *input) cardResource(card string) string {
	if ci := in.cards[card]; ci != nil {
		return ci.resource
	}
	return engine.CardResourceOf(card, in.cfg.ResourceCountName)
}

// unknownCard describes a card no node has and suggests the closest existing name.
func (in *input) unknownCard(card string) (msg, suggestion string) {
	if len(in.cardNames) == 0 {
		return fmt.Sprintf("no node has card %s (no node has any card model)", card), ""
	}
	if nodes := in.labelled[card]; len(nodes) > 0 {
		return fmt.Sprintf("no node has card %s: %s %s it, but without the .count and .memory labels the card quota sees no card (see card-labels-incomplete)",
			card, listSome(nodes, 4), map[bool]string{true: "labels", false: "label"}[len(nodes) == 1]), ""
	}
	if best, ok := closest(card, in.cardNames); ok {
		return fmt.Sprintf("no node has card %s (did you mean %s?)", card, best), best
	}
	return fmt.Sprintf("no node has card %s; the cluster has %s", card, listSome(in.cardNames, 6)), ""
}

// noCardsFix is the fix when the cluster has no card model at all.
func (in *input) noCardsFix() string {
	d := in.domain()
	return fmt.Sprintf("label the GPU nodes with %s/gpu.product, %s/gpu.count and %s/gpu.memory (GPU feature discovery does), "+
		"so that Volcano's capacity-card plugin sees their cards", d, d, d)
}

// pending reports whether the pod waits for a node (query.Waiting: not bound, not finished, not being deleted).
func pending(p *corev1.Pod) bool { return query.Waiting(p) }

func podObject(p *corev1.Pod) Object {
	return Object{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}

func groupObject(g *engine.PodGroup) Object {
	return Object{Kind: "PodGroup", Namespace: g.Namespace, Name: g.Name}
}

func queueObject(name string) Object { return Object{Kind: "Queue", Name: name} }

func annotationField(key string) string { return "metadata.annotations[" + key + "]" }

// listSome joins up to n names and says how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// closest is the candidate nearest to name when name looks like a typo of it: the same ignoring case,
// spaces, dashes and a letter O for a zero; else a small edit distance (ties alphabetically); else one
// name containing the other ("H100-80GB" in "NVIDIA-H100-80GB"). A candidate whose numbers differ is a
// different model or queue (NVIDIA-H20 is not NVIDIA-H200, team-1 is not team-2) and never suggested.
func closest(name string, candidates []string) (string, bool) {
	lname, norm := strings.ToLower(name), normalizeName(name)
	best, bestD := "", -1
	for _, c := range candidates {
		if normalizeName(c) == norm {
			return c, true
		}
	}
	nums := digitRuns(name)
	var same []string
	for _, c := range candidates {
		if digitRuns(c) == nums {
			same = append(same, c)
		}
	}
	for _, c := range same {
		d := resolve.Distance(lname, strings.ToLower(c))
		if bestD < 0 || d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if bestD >= 0 && bestD <= max(2, len([]rune(name))/3) {
		return best, true
	}
	for _, c := range same {
		lc := strings.ToLower(c)
		if len(lname) >= 3 && (strings.Contains(lc, lname) || strings.Contains(lname, lc)) {
			return c, true
		}
	}
	return "", false
}

// normalizeName folds what a typist confuses: case, separators, a letter O typed for a zero.
func normalizeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case ' ', '-', '_':
			continue
		case 'o':
			r = '0'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// digitRuns lists the numbers in a name: "NVIDIA-H200/mig-1g.18gb-mixed" gives "200,1,18".
func digitRuns(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		isDigit := r >= '0' && r <= '9'
		if isDigit {
			if !in && b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteRune(r)
		}
		in = isDigit
	}
	return b.String()
}

// checkUnreadable turns the engine's input problems (values it could not read and worked around) into
// findings, leaving out the ones the card checks report with more detail.
func checkUnreadable(in *input) []Finding {
	covered := map[string]string{
		"Queue":    annotationField(codec.CardQuotaAnnotation),
		"PodGroup": annotationField(codec.CardRequestAnnotation),
		"Pod":      annotationField(codec.CardNameAnnotation),
	}
	var out []Finding
	for _, p := range in.c.Problems() {
		if covered[p.Kind] != "" && covered[p.Kind] == p.Field {
			continue
		}
		obj := Object{Kind: p.Kind, Name: p.Object}
		if p.Kind != "Node" && p.Kind != "Queue" {
			if ns, name, ok := strings.Cut(p.Object, "/"); ok {
				obj.Namespace, obj.Name = ns, name
			}
		}
		fix := "correct the value; until then it is read as the message says"
		if p.Kind == "Node" {
			fix = "the node component (HAMi's device plugin, or kubectl hami agent) writes node annotations: check its version and logs"
		}
		out = append(out, Finding{Severity: Warning, Object: obj, Field: p.Field, Message: p.Message, Fix: fix})
	}
	return out
}
