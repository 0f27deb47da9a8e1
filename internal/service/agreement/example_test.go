package agreement_test

import (
	"fmt"

	"github.com/scorekit/scorekit/internal/service/agreement"
)

// A scorer's pass/fail verdicts against a person's labels, and a second person's labels
// against the first's: the ceiling a scorer can reach.
func ExamplePassFail() {
	person := map[string]bool{"r1": true, "r2": true, "r3": false, "r4": false, "r5": true, "r6": false}
	scorer := map[string]bool{"r1": true, "r2": false, "r3": false, "r4": false, "r5": true, "r6": true}
	second := map[string]bool{"r1": true, "r2": true, "r3": false, "r4": true, "r5": true, "r6": false}

	r, err := agreement.PassFail(agreement.Join(person, scorer))
	if err != nil {
		panic(err)
	}
	fmt.Println("runs", r.Runs, "accuracy", r.Accuracy)
	fmt.Println("kappa", r.Kappa)
	for _, d := range r.Disagreements {
		fmt.Printf("%s: person pass=%v, scorer pass=%v\n", d.RunID, d.Want, d.Got)
	}
	people, _ := agreement.PassFail(agreement.Join(person, second))
	fmt.Printf("people with each other: kappa %.3f\n", people.Kappa.Value)
	// Output:
	// runs 6 accuracy 0.667 [0.300, 0.903]
	// kappa 0.333 [-0.421, 1.000]
	// r2: person pass=true, scorer pass=false
	// r6: person pass=false, scorer pass=true
	// people with each other: kappa 0.667
}
