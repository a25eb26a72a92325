//go:build mutation_replayscope

package checkout

import (
	"strings"

	"exactlyonce/idem"
)

// The mutation "the replay cache not keyed by customer": the memory of
// finished answers (idem.Answers, Config.Answers) is looked up by the key
// alone. A customer who sends a key another customer used, with the same
// body, is answered with the other customer's order, on a shop that
// remembers it, and is never charged or given an order of their own.
func init() {
	mutations = append(mutations, mutation{config: func(cfg *Config) {
		if cfg.Answers != nil {
			cfg.Answers = keyOnlyAnswers{cfg.Answers}
		}
	}})
}

// keyOnlyAnswers drops the scope from the kit's entry names, which are
// scope, NUL, key (idem's answerKey).
type keyOnlyAnswers struct{ idem.Answers }

func keyOnly(name string) string {
	_, key, _ := strings.Cut(name, "\x00")
	return key
}

func (a keyOnlyAnswers) Get(name string) (idem.Answer, bool) { return a.Answers.Get(keyOnly(name)) }

func (a keyOnlyAnswers) Add(name string, answer idem.Answer) bool {
	return a.Answers.Add(keyOnly(name), answer)
}
