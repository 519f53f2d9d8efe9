// Package extender serves kube-scheduler's extender verbs (filter, prioritize, bind) and HAMi's mutating
// webhook from the engine's verdicts. Its state is the engine's cluster model kept current by informers and
// rebuilt from HAMi's annotations after a restart.
package extender
