package cli

import (
	"fmt"
	"slices"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// checkCardNames refuses a --card that no node has and no queue's quota names when a known card is close
// to it: a misspelled card would otherwise get advice built on the misspelling ("add it to the quota").
// A name far from every known card is kept: the verdict then says no node has it.
func checkCardNames(c *engine.Cluster, card string) error {
	if card == "" {
		return nil
	}
	alts, err := codec.ParseCardName(card)
	if err != nil {
		return nil // Validate reported it
	}
	known := query.CardNames(c)
	for _, alt := range alts {
		if slices.Contains(known, alt) {
			continue
		}
		if sugg := resolve.Closest(alt, known, resolve.DefaultSuggestions); len(sugg) > 0 {
			return fmt.Errorf("--card %q: no node has card %q and no queue's quota names it; %s", card, alt, resolve.DidYouMean(sugg))
		}
	}
	return nil
}
