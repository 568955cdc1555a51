package engine

import "context"

// runProbed runs one seed as Run does, with the tests' probe: with
// relocate, every paused guest moves into a new instance of its module
// before it resumes. The probe comes back with what the run counted (the
// moves, and the guests a fork copied from its checkpoint).
func (p *Prepared) runProbed(ctx context.Context, opt RunOptions, relocate bool) (*Result, runProbe, error) {
	probe := runProbe{relocate: relocate}
	res, err := p.run(ctx, opt, runWith{probe: &probe})
	return res, probe, err
}
