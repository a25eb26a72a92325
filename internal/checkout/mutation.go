package checkout

// mutations are the guarantees this binary was built without, and the
// faults built into it: none, unless it was built with a mutation_* or
// fault_* build tag (mutation_*.go, fault_*.go). The chaos harness builds
// such a web binary for its mutation runs, to show that its history checker
// catches the removal of each guarantee (docs/analysis.md); a production
// build compiles no such file, and no setting turns one on. It is written
// only by those files' init, before main runs.
var mutations []mutation

// mutation removes one guarantee: config changes the engine's settings
// before the engine is built from them, engine the engine once built.
type mutation struct {
	config func(*Config)
	engine func(*Engine)
}

// mutate applies the mutations compiled in to cfg, or to e.
func mutate(cfg *Config, e *Engine) {
	for _, m := range mutations {
		if cfg != nil && m.config != nil {
			m.config(cfg)
		}
		if e != nil && m.engine != nil {
			m.engine(e)
		}
	}
}
