//! Find-CPU and update cost of the four push variants (gedf-heap paper Figs 8–11, at the
//! data-structure level) for m = 2 … 1024 under light load (R = 0.6: 40% of CPUs free) and
//! heavy load (no free CPU).
//!
//!     cargo bench -p rtsched-policies --bench cpudl            # full
//!     cargo bench -p rtsched-policies --bench cpudl -- heap    # one variant
//!
//! `find`: a push's search for a destination CPU. `update`: one CPU's earliest key changes
//! (enqueue/dequeue at the queue's head): a store for linear, a mask bit for fmask, an
//! O(log m) re-sift for heap, two masks for cpupri. A push costs about one of each.
//! `examples/findcpu_scaling.rs` prints the same figures as a table with the ratios.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

#[path = "support/findcpu.rs"]
mod findcpu;
use findcpu::*;

const MS: [u32; 10] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const LOADS: [(&str, f64); 2] = [("light", 0.6), ("heavy", 1.0)];

fn bench(c: &mut Criterion) {
    for (load, busy) in LOADS {
        for v in VARIANTS {
            let mut g = c.benchmark_group(format!("find/{}/{load}", v.name()));
            g.throughput(Throughput::Elements(1));
            for m in MS {
                let model = populated(v, m, busy, 42);
                let mut rng = Xs(7);
                g.bench_with_input(BenchmarkId::from_parameter(m), &m, |b, _| {
                    b.iter(|| black_box(model.find(black_box(rng.below(KEY_SPACE)))))
                });
            }
            g.finish();
            let mut g = c.benchmark_group(format!("update/{}/{load}", v.name()));
            for m in MS {
                let mut model = populated(v, m, busy, 42);
                let mut rng = Xs(9);
                g.bench_with_input(BenchmarkId::from_parameter(m), &m, |b, &m| {
                    b.iter(|| {
                        let cpu = rng.below(m as u64) as u32;
                        let k = draw(&mut rng, cpu, busy);
                        model.update(cpu, black_box(k))
                    })
                });
            }
            g.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_millis(500)).sample_size(20);
    targets = bench
}
criterion_main!(benches);
