package query

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventTime is when an event was last seen: lastTimestamp, else eventTime (events.k8s.io's series), else its
// creation.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
