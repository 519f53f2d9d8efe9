// Package agent will read GPUs through NVML and register them on the node in HAMi's format.
// It is built in the agent issue; until then it holds nothing.
package agent
