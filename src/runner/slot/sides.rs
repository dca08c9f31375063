//! The sides of a simultaneous slot on this machine: CPU sets (`mongobench run --cpu-sets
//! 0/1`), one per target, each holding the target's server process and the client workers that
//! load it, so that targets measured at the same time do not take each other's CPUs. Targets
//! trade sides every slot in a seeded, balanced order (for two: AB then BA, or BA then AB, in
//! every pair of slots), so that a faster side favours none of them; the comparison estimates
//! the side's effect and removes it (docs/results.md, "Simultaneous slots").
//!
//! CPUs are assigned with `sched_setaffinity`, thread by thread: the server process's threads
//! (found through the process listening on the target's port) and a runtime of the target's
//! own whose threads start on the side's CPUs. A cgroup cpuset would also hold threads the
//! server starts later on another thread's mask; affinity needs no cgroup hierarchy and holds
//! every thread that exists or is started from a pinned one.

use crate::contract::CpuSet;
use crate::workload::rng::{Stream, key};

/// Stream tag of the side assignments (apart from every workload stream's and the slot
/// orders').
const TAG_SIDES: u64 = 0x51de;

/// The side of each of `targets` targets in `slot` (from 1) of the size at `size_index`:
/// target `i` is on side `(i + r) mod targets`, the rotation `r` running through every value
/// once in each block of `targets` slots, in an order drawn from the seed per block. Two
/// targets so swap sides in every pair of slots, in a random one of the two orders.
pub fn assignment(seed: u64, size_index: usize, slot: u32, targets: usize) -> Vec<usize> {
    if targets == 0 {
        return Vec::new();
    }
    let n = targets as u32;
    let (block, place) = ((slot.max(1) - 1) / n, (slot.max(1) - 1) % n);
    let mut stream = Stream::new(key(
        seed ^ (size_index as u64).wrapping_mul(0x9E37_79B9),
        TAG_SIDES,
        u64::from(block),
    ));
    let mut rotations: Vec<usize> = (0..targets).collect();
    for i in (1..targets).rev() {
        rotations.swap(i, stream.index(i + 1));
    }
    let r = rotations[place as usize];
    (0..targets).map(|i| (i + r) % targets).collect()
}

/// Restricts thread (or process) `tid` to `cpus`; 0 is the calling thread.
///
/// # Errors
/// The system call's error (a thread that has ended, no permission, a CPU that does not
/// exist), with the thread named.
pub fn pin(tid: u32, cpus: &CpuSet) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data, all-zero bytes being the empty set; CPU_SET writes
    // within it for CPUs below CPU_SETSIZE (1024, which CpuSet's parser enforces).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.cpus() {
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: a valid pointer to a set of the size passed.
    let rc = unsafe {
        libc::sched_setaffinity(
            tid as libc::pid_t,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "setting the CPUs of thread {tid} to {cpus}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Restricts every thread of process `pid` to `cpus`.
///
/// # Errors
/// The process's threads cannot be listed, or one cannot be pinned.
pub fn pin_process(pid: u32, cpus: &CpuSet) -> Result<(), String> {
    let dir = format!("/proc/{pid}/task");
    let tasks =
        std::fs::read_dir(&dir).map_err(|e| format!("listing the threads in {dir}: {e}"))?;
    for task in tasks.flatten() {
        if let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) {
            pin(tid, cpus)?;
        }
    }
    Ok(())
}

/// A runtime whose worker threads all run on `cpus`, for one side's client workers.
///
/// # Errors
/// The runtime cannot be built.
pub fn pinned_runtime(cpus: &CpuSet) -> std::io::Result<tokio::runtime::Runtime> {
    let set = cpus.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cpus.cpus().len().max(1))
        .thread_name("mongobench-side")
        .on_thread_start(move || {
            if let Err(e) = pin(0, &set) {
                tracing::warn!("{e}");
            }
        })
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_targets_swap_sides_in_every_pair_of_slots_in_a_seeded_order() {
        let mut first_ab = 0;
        for pair in 0..1000u32 {
            let a = assignment(7, 0, 2 * pair + 1, 2);
            let b = assignment(7, 0, 2 * pair + 2, 2);
            let mut both = [a.clone(), b.clone()];
            both.sort();
            assert_eq!(both, [vec![0, 1], vec![1, 0]], "pair {pair}");
            first_ab += usize::from(a == [0, 1]);
        }
        // Either order about half the time (±5 standard deviations).
        assert!((420..=580).contains(&first_ab), "{first_ab}");
        assert_eq!(assignment(7, 0, 3, 2), assignment(7, 0, 3, 2));
        let orders = |seed| {
            (1..=16)
                .map(|s| assignment(seed, 0, s, 2))
                .collect::<Vec<_>>()
        };
        assert_ne!(orders(7), orders(8));
        // Three targets: every rotation once per block of three slots.
        for block in 0..50 {
            let mut seen: Vec<Vec<usize>> = (1..=3)
                .map(|k| assignment(9, 1, 3 * block + k, 3))
                .collect();
            seen.sort();
            assert_eq!(seen, [vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1]]);
        }
        assert!(assignment(1, 0, 1, 0).is_empty());
    }

    #[test]
    fn a_pinned_thread_runs_only_on_its_cpus() {
        let set = CpuSet::try_from("0".to_owned()).unwrap();
        let cpus = std::thread::spawn(move || {
            pin(0, &set).unwrap();
            // SAFETY: sched_getcpu takes no argument.
            (0..1000)
                .map(|_| unsafe { libc::sched_getcpu() })
                .collect::<Vec<_>>()
        })
        .join()
        .unwrap();
        assert!(cpus.iter().all(|&c| c == 0), "{cpus:?}");
        let none = CpuSet::try_from("1023".to_owned()).unwrap();
        assert!(
            pin(0, &none)
                .unwrap_err()
                .contains("setting the CPUs of thread 0 to 1023")
        );
    }
}
