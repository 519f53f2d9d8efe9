package engine

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Card kinds, as Volcano's capacity-card plugin names cards on a node.
const (
	CardKindWhole = "card" // a whole GPU: the node's product label
	CardKindMIG   = "mig"  // <product>/mig-<profile>-mixed, from allocatable <domain>/mig-<profile>
	CardKindMPS   = "mps"  // <product>/mps-<GiB>g*1/<replicas>, from allocatable <domain>/gpu.shared
)

// NodeCard is one card model a node offers and how many of it, as the card quota counts them.
type NodeCard struct {
	Name     string `json:"name"`
	Resource string `json:"resource"` // the extended resource a pod asks for to get this card
	Count    int64  `json:"count"`
	Kind     string `json:"kind"`
}

// productLabel is the capacity-card plugin's rule for a node's card model: <domain>/<type>.product.
var productLabel = regexp.MustCompile(`^((.+?)/(\w+))\.product$`)

// CardProductLabel reports whether a node label key is a card model label of the capacity-card plugin,
// <domain>/<type>.product (MIG product labels excluded), with its prefix <domain>/<type>, under which the
// .count and .memory labels live, and its domain.
func CardProductLabel(key string) (prefix, domain string, ok bool) {
	if !strings.HasSuffix(key, ".product") { // every node's labels are read: most are not
		return "", "", false
	}
	m := productLabel.FindStringSubmatch(key)
	if len(m) < 4 || strings.HasPrefix(m[3], "mig") || strings.Contains(m[1], "/mig-") {
		return "", "", false
	}
	return m[1], m[2], true
}

// CardResourceOf is the resource a card maps to by its name's shape, for a card no node offers:
// <product>/mig-<profile>-mixed asks for <domain>/mig-<profile>, <product>/mps-... for <domain>/gpu.shared,
// any other name for the GPU count resource. domain is the count resource's.
func CardResourceOf(card, countResource string) string {
	domain, _, _ := strings.Cut(countResource, "/")
	if product, rest, ok := strings.Cut(card, "/"); ok && product != "" {
		switch {
		case strings.HasPrefix(rest, "mig-") && strings.HasSuffix(rest, "-mixed"):
			return domain + "/mig-" + strings.TrimSuffix(strings.TrimPrefix(rest, "mig-"), "-mixed")
		case strings.HasPrefix(rest, "mps-"):
			return domain + "/gpu.shared"
		}
	}
	return countResource
}

// nodeCards reads the cards of a node from its labels and allocatable. physical is the number of GPUs HAMi
// registered (0 when it registered none): on a HAMi node allocatable nvidia.com/gpu counts split-count slots,
// so the physical count replaces it and slots returns the allocatable figure Volcano's plugin would count.
func nodeCards(n *corev1.Node, physical int, cfg Config) (product string, cards []NodeCard, slots int64) {
	keys := make([]string, 0, len(n.Labels))
	for k := range n.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var prefix, domain string
	for _, k := range keys {
		p, d, ok := CardProductLabel(k)
		if !ok || strings.TrimSpace(n.Labels[k]) == "" {
			continue
		}
		if _, ok := n.Labels[p+".count"]; !ok {
			continue
		}
		if _, ok := n.Labels[p+".memory"]; !ok {
			continue
		}
		prefix, domain, product = p, d, n.Labels[k]
		break
	}
	if product == "" {
		return "", nil, 0
	}
	memMiB, _ := strconv.ParseInt(strings.TrimSpace(n.Labels[prefix+".memory"]), 10, 64)
	replicas, _ := strconv.ParseInt(strings.TrimSpace(n.Labels[domain+"/gpu.replicas"]), 10, 64)
	names := make([]string, 0, len(n.Status.Allocatable))
	for r := range n.Status.Allocatable {
		names = append(names, string(r))
	}
	sort.Strings(names)
	hamiOwn := map[string]bool{cfg.ResourceMemoryName: true, cfg.ResourceMemoryPercentageName: true, cfg.ResourceCoreName: true, cfg.ResourcePriorityName: true}
	whole := false
	for _, r := range names {
		q := n.Status.Allocatable[corev1.ResourceName(r)]
		v := quantityValue(q)
		if v <= 0 || !strings.HasPrefix(r, domain+"/") || hamiOwn[r] {
			continue
		}
		switch {
		case r == domain+"/gpu.shared":
			if replicas > 0 {
				cards = append(cards, NodeCard{Name: fmt.Sprintf("%s/mps-%dg*1/%d", product, int64(math.Round(float64(memMiB)/1024)), replicas),
					Resource: r, Count: v, Kind: CardKindMPS})
			}
		case strings.HasPrefix(r, domain+"/mig-"):
			cards = append(cards, NodeCard{Name: fmt.Sprintf("%s/mig-%s-mixed", product, strings.TrimPrefix(r, domain+"/mig-")),
				Resource: r, Count: v, Kind: CardKindMIG})
		case !whole:
			whole = true
			c := NodeCard{Name: product, Resource: r, Count: v, Kind: CardKindWhole}
			if r == cfg.ResourceCountName && physical > 0 {
				if v != int64(physical) {
					slots = v
				}
				c.Count = int64(physical)
			}
			cards = append(cards, c)
		}
	}
	return product, cards, slots
}

// Card returns the node's card of that name, or nil.
func (n *Node) Card(name string) *NodeCard {
	for i := range n.Cards {
		if n.Cards[i].Name == name {
			return &n.Cards[i]
		}
	}
	return nil
}

// cardChoice is the index of the first of the alternatives the node has, or -1.
func (n *Node) cardChoice(alts []string) int {
	for i, a := range alts {
		if n.Card(a) != nil {
			return i
		}
	}
	return -1
}

// cardNames lists the node's card names for messages.
func (n *Node) cardNames() string {
	if len(n.Cards) == 0 {
		return "no card model (no <domain>/<type>.product, .count and .memory labels)"
	}
	parts := make([]string, len(n.Cards))
	for i, c := range n.Cards {
		parts[i] = c.Name
	}
	return strings.Join(parts, ", ")
}

// CardPreference is the capacity-card node score for the alternative at index i: 100 x 0.5^i, 0 for none.
func CardPreference(i int) float64 {
	if i < 0 {
		return 0
	}
	return 100 * math.Pow(0.5, float64(i))
}
