package device

import "fmt"

// CustomFilterCode is HAMi's reason for a device a family's own rule refuses after the common arithmetic
// (MetaX's and Moore Threads' customFilterRule, Kunlun vXPU's FitVXPU).
const CustomFilterCode = "CardNotFoundCustomFilterRule"

// CustomFilterRow completes a family's custom-filter row: the row fails with CustomFilterCode and its
// sentence counts the devices it refused with the example's detail. The family gives the row's number, name,
// the table's text and its Check.
func CustomFilterRow(r Row) Row {
	r.Code = CustomFilterCode
	r.Say = sayRefused
	return r
}

func sayRefused(s Saying) string {
	return fmt.Sprintf("%d device(s): %s (%s)", s.GPUs, s.Detail, s.Where)
}

// OneDevice is the Check of a family whose pod gets one device of the type for all its containers (MetaX
// GPU, Moore Threads): a device other than one an earlier container of the pod took fails; why ends the
// detail ("an earlier container of the pod took <UUID>; <why>").
func OneDevice(why string) func(d *Dev) Outcome {
	return func(d *Dev) Outcome {
		if t := d.OtherTaken(); t != "" {
			return Outcome{Fail: true, Detail: "an earlier container of the pod took " + t + "; " + why}
		}
		return Outcome{}
	}
}
