package vastai

// Die mode, HAMi v2.10.0's Vastai Fit on devices whose customInfo says DeviceStrategy "die" (isDieMode,
// pkg/device/vastai/device.go:389-403): each registered device is one die of a card (customInfo AIC); a
// container's dies are chosen card by card and the node scores the share of them on one card.

import (
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// readRegister is HAMi's device list in hami.io/node-va-register, with each die's card: a device whose
// customInfo has DeviceStrategy "die" and a string AIC gets its card as its interconnect group
// (codec.DeviceInfo.NetworkID), numbered 1, 2 ... in the order the cards first appear on the node.
func readRegister(k *device.Kind, n *corev1.Node, bad device.Report) (device.Registration, bool) {
	reg, ok := device.RegisterList(k, n, bad)
	if !ok {
		return reg, ok
	}
	cards := dieCards(n.Annotations[k.Register])
	for i := range reg.Devices {
		reg.Devices[i].NetworkID = nil
		if i < len(cards) && cards[i] > 0 {
			c := cards[i]
			reg.Devices[i].NetworkID = &c
		}
	}
	return reg, true
}

// dieCards numbers each entry's card (AIC) of a die-mode device, 0 for a device that is no die or names no
// card; anything unreadable reads as no die.
func dieCards(raw string) []int {
	var entries []struct {
		CustomInfo map[string]any `json:"customInfo"`
	}
	if json.Unmarshal([]byte(raw), &entries) != nil {
		return nil
	}
	ids := map[string]int{}
	out := make([]int, len(entries))
	for i, e := range entries {
		if s, _ := e.CustomInfo["DeviceStrategy"].(string); s != "die" {
			continue
		}
		aic, ok := e.CustomInfo["AIC"].(string)
		if !ok {
			continue
		}
		if ids[aic] == 0 {
			ids[aic] = len(ids) + 1
		}
		out[i] = ids[aic]
	}
	return out
}

// prioritize is die mode's choice of several dies among more that fit (computeBestCombination,
// device.go:336-374, called at 308-321): the dies grouped by card, the cards with the most fitting dies
// first, the dies of each card in the walk's order. HAMi ranges over a map of cards and sorts them stably by
// count, so cards of one count come in the map's order there, which for a few cards is mostly the order they
// were added (the walk's); here always the walk's, one of HAMi's answers and its likeliest. One die takes the walk's first (314); card mode (no card) takes the walk's first count.
func prioritize(walk []device.Candidate, count int, _ int64, _ map[string]string) []int {
	if count <= 1 || len(walk) == 0 || walk[0].Group == nil {
		return nil
	}
	byCard := map[int][]int{}
	var cards []int
	for _, c := range walk {
		if c.Group == nil {
			continue // a die without a card is left out, as HAMi's map of AICs leaves it
		}
		if _, seen := byCard[*c.Group]; !seen {
			cards = append(cards, *c.Group)
		}
		byCard[*c.Group] = append(byCard[*c.Group], c.Index)
	}
	sort.SliceStable(cards, func(i, j int) bool { return len(byCard[cards[i]]) > len(byCard[cards[j]]) })
	var out []int
	for _, c := range cards {
		for _, i := range byCard[c] {
			if out = append(out, i); len(out) == count {
				return out
			}
		}
	}
	return out
}

// scoreNode is die mode's ScoreNode (device.go:181-219): for each container, the share of its dies that sit
// on its most used card, summed over the pod's containers (init containers' included), in float32 as HAMi
// adds them; 0 when any die the pod takes is no die with a card.
func scoreNode(node []device.ScoredDevice, placed [][]int) float64 {
	return float64(device.GroupShareSum(node, placed))
}
