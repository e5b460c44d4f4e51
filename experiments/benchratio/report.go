package benchratio

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteText prints the ratios as a table: target, what is compared, median,
// min–max and number of paired counts, goal, verdict; a missing ratio says
// which samples it lacked.
func WriteText(w io.Writer, rs []Ratio) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tcomparison\tmedian\tmin–max\tn\tgoal\tverdict")
	for _, r := range rs {
		if r.Missing != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t0\t%s\tmissing: %s\n", r.Target, r.Label, r.Goal, r.Missing)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s–%s\t%d\t%s\t%s\n", r.Target, r.Label,
			fmtRatio(r.Median), fmtRatio(r.Min), fmtRatio(r.Max), len(r.Values), r.Goal, r.Verdict())
	}
	return tw.Flush()
}

// fmtRatio prints 3 significant digits (0.912, 12.3), whole numbers from 100.
func fmtRatio(x float64) string {
	if x >= 100 || x <= -100 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// WriteJSON writes the ratios as an indented JSON array (each with its
// per-count values and verdict).
func WriteJSON(w io.Writer, rs []Ratio) error {
	type out struct {
		Ratio
		Verdict string `json:"verdict"`
	}
	os := make([]out, len(rs))
	for i, r := range rs {
		os[i] = out{r, r.Verdict()}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(os)
}
