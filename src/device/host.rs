//! How much memory this process may still take: the smallest of what the machine has free, what
//! its control group allows, and what its address-space limit leaves; and the most it has held.
//!
//! A process in a container or a `JupyterHub` lives under a cgroup memory limit far below the
//! machine's free memory, and one started under `ulimit -v` under `RLIMIT_AS`. Comparing an
//! estimate with free memory alone lets a run start there that the allocator then aborts.
//!
//! The machine's free memory and this process's address space come from `sysinfo` on every
//! system; the cgroups are Linux's own (sysinfo reads only the innermost one and counts its page
//! cache as used); the peak from the system's own call (sysinfo does not keep it).

use sysinfo::{MemoryRefreshKind, System};

/// Bytes this process may still allocate, or `None` where the system says nothing.
///
/// The smallest of the machine's available memory, on Linux each enclosing cgroup's limit
/// less its usage (reclaimable page cache counted as free), and on Unix `RLIMIT_AS` less the
/// address space in use.
pub fn memory_available() -> Option<u64> {
    let mut system = System::new();
    system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    let free = Some(system.available_memory()).filter(|&b| b > 0);
    [free, cgroup_room_now(), address_space_left()]
        .into_iter()
        .flatten()
        .min()
}

/// The CPU's name as the system gives it (`AMD Ryzen 9 7950X 16-Core Processor`), or empty.
pub fn cpu_name() -> String {
    use sysinfo::{CpuRefreshKind, RefreshKind};
    let system =
        System::new_with_specifics(RefreshKind::nothing().with_cpu(CpuRefreshKind::nothing()));
    system
        .cpus()
        .first()
        .map(|c| c.brand().trim().to_owned())
        .unwrap_or_default()
}

/// The address space this process maps, in bytes.
#[cfg(unix)]
fn address_space_in_use() -> Option<u64> {
    use sysinfo::{ProcessRefreshKind, ProcessesToUpdate};
    let pid = sysinfo::get_current_pid().ok()?;
    let mut system = System::new();
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        false,
        ProcessRefreshKind::nothing().with_memory(),
    );
    system.process(pid).map(sysinfo::Process::virtual_memory)
}

/// The memory cgroup directories that enclose this process, innermost first, from a
/// `/proc/self/cgroup` text: for cgroup v2 (`0::/path`) under `root`, for v1 (a line whose
/// controllers include `memory`) under `root/memory`. Every ancestor up to the mount is listed,
/// since a limit set on a parent binds its children.
#[cfg(any(test, target_os = "linux"))]
fn cgroup_dirs(text: &str, root: &str) -> Vec<(String, Version)> {
    let mut dirs = Vec::new();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (base, version) = if controllers.is_empty() {
            (root.to_owned(), Version::Two)
        } else if controllers.split(',').any(|c| c == "memory") {
            (format!("{root}/memory"), Version::One)
        } else {
            continue;
        };
        let mut path = path.trim_end_matches('/');
        loop {
            dirs.push((format!("{base}{path}"), version));
            match path.rfind('/') {
                Some(cut) => path = &path[..cut],
                None => break,
            }
        }
    }
    dirs
}

#[cfg(any(test, target_os = "linux"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    One,
    Two,
}

/// What a cgroup still allows: its limit less its usage, with the inactive page cache (which the
/// kernel reclaims before it refuses an allocation) counted as free. `None` without a limit.
#[cfg(any(test, target_os = "linux"))]
fn cgroup_room(limit: &str, usage: &str, stat: &str, version: Version) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?; // "max" (v2, no limit) does not parse
    // v1 writes "no limit" as a number near 2^63.
    if limit >= 1 << 62 {
        return None;
    }
    let usage: u64 = usage.trim().parse().ok()?;
    let field = match version {
        Version::One => "total_inactive_file ",
        Version::Two => "inactive_file ",
    };
    let cache: u64 = stat
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Some(limit.saturating_sub(usage.saturating_sub(cache)))
}

/// The least room any enclosing memory cgroup leaves (Linux's alone).
#[cfg(not(target_os = "linux"))]
fn cgroup_room_now() -> Option<u64> {
    None
}

/// The least room any enclosing memory cgroup leaves.
#[cfg(target_os = "linux")]
fn cgroup_room_now() -> Option<u64> {
    let read = |path: String| std::fs::read_to_string(path).ok();
    let text = read("/proc/self/cgroup".to_owned())?;
    cgroup_dirs(&text, "/sys/fs/cgroup")
        .into_iter()
        .filter_map(|(dir, version)| {
            let (limit, usage) = match version {
                Version::One => ("memory.limit_in_bytes", "memory.usage_in_bytes"),
                Version::Two => ("memory.max", "memory.current"),
            };
            cgroup_room(
                &read(format!("{dir}/{limit}"))?,
                &read(format!("{dir}/{usage}"))?,
                &read(format!("{dir}/memory.stat")).unwrap_or_default(),
                version,
            )
        })
        .min()
}

/// `RLIMIT_AS` less the address space this process already maps.
#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "one libc call with no safe wrapper in the standard library"
)]
fn address_space_left() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one plain struct we own and reads nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &raw mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(
        limit
            .rlim_cur
            .saturating_sub(address_space_in_use().unwrap_or(0)),
    )
}

/// No address-space limit outside Unix.
#[cfg(not(unix))]
fn address_space_left() -> Option<u64> {
    None
}

/// The most resident memory this process has held so far, in bytes: `getrusage`'s
/// `ru_maxrss` (KiB on Linux, bytes on Apple systems).
#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "one libc call with no safe wrapper in the standard library"
)]
pub fn peak_memory() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one plain struct we own and reads nothing else.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut usage) } != 0 {
        return None;
    }
    let max = u64::try_from(usage.ru_maxrss).ok()?;
    if cfg!(target_vendor = "apple") {
        Some(max)
    } else {
        max.checked_mul(1024)
    }
}

/// The most resident memory this process has held so far, in bytes: Windows' peak working set.
#[cfg(windows)]
#[expect(
    unsafe_code,
    reason = "one Win32 call with no safe wrapper in the standard library"
)]
pub fn peak_memory() -> Option<u64> {
    use windows_sys::Win32::System::ProcessStatus::{
        GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::GetCurrentProcess;
    let size = u32::try_from(std::mem::size_of::<PROCESS_MEMORY_COUNTERS>()).ok()?;
    // SAFETY: an all-zero PROCESS_MEMORY_COUNTERS is a valid value of this plain C struct.
    let mut counters: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    counters.cb = size;
    // SAFETY: the pseudo-handle of this process needs no closing; the call writes `size` bytes
    // of the struct we own.
    let ok = unsafe { GetProcessMemoryInfo(GetCurrentProcess(), &raw mut counters, size) };
    (ok != 0).then_some(counters.PeakWorkingSetSize as u64)
}

/// Where the system keeps no such figure.
#[cfg(not(any(unix, windows)))]
pub fn peak_memory() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_left_and_the_peak_are_read_from_the_system() {
        let left = memory_available().expect("this machine says how much memory is free");
        let mut system = System::new();
        system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
        assert!(left > 0 && left <= system.total_memory(), "{left}");
        // 64 MiB touched page by page raise the peak at least that far.
        let before = peak_memory().expect("a peak");
        let held = vec![1u8; 64 << 20];
        let after = peak_memory().expect("a peak");
        assert!(
            after >= before && after >= held.len() as u64,
            "{before} {after}"
        );
        assert_eq!(held.iter().map(|&b| u64::from(b)).sum::<u64>(), 64 << 20);
    }

    #[test]
    fn every_enclosing_memory_cgroup_is_looked_at_for_both_versions() {
        let text = "4:memory:/hub/user7\n3:cpu,cpuacct:/hub\n0::/jobs/a\n";
        let dirs = cgroup_dirs(text, "/cg");
        let named: Vec<_> = dirs.iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(
            named,
            [
                "/cg/memory/hub/user7",
                "/cg/memory/hub",
                "/cg/memory",
                "/cg/jobs/a",
                "/cg/jobs",
                "/cg",
            ]
        );
        assert_eq!(dirs[0].1, Version::One);
        assert_eq!(dirs[3].1, Version::Two);
        // The root cgroup alone: its mount.
        assert_eq!(cgroup_dirs("0::/\n", "/cg"), [("/cg".into(), Version::Two)]);
    }

    #[test]
    fn a_cgroups_room_is_its_limit_less_what_cannot_be_reclaimed() {
        let gib = 1u64 << 30;
        let stat = format!("anon 1\ninactive_file {}\nactive_file 5\n", gib / 2);
        // 4 GiB allowed, 3 GiB used of which half a GiB is inactive cache: 1.5 GiB left.
        let room = cgroup_room(
            &format!("{}\n", 4 * gib),
            &(3 * gib).to_string(),
            &stat,
            Version::Two,
        );
        assert_eq!(room, Some(gib + gib / 2));
        assert_eq!(cgroup_room("max\n", "100", "", Version::Two), None);
        assert_eq!(
            cgroup_room("9223372036854771712", "100", "", Version::One),
            None
        );
        let v1 = format!("cache 9\ntotal_inactive_file {gib}\n");
        assert_eq!(
            cgroup_room(
                &(2 * gib).to_string(),
                &(2 * gib).to_string(),
                &v1,
                Version::One
            ),
            Some(gib)
        );
        // Usage over the limit leaves nothing, not a wrapped-around number.
        assert_eq!(cgroup_room("10", "20", "", Version::Two), Some(0));
    }
}
