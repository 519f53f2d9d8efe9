// Package extender will serve kube-scheduler's filter, prioritize and bind verbs from the engine's verdicts.
// It is built in the serve-extender issue; until then it holds nothing.
package extender
