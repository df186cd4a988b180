//! How much memory this process may still take: the smallest of what the machine has free, what
//! its control group allows, and what its address-space limit leaves.
//!
//! A process in a container or a `JupyterHub` lives under a cgroup memory limit far below the
//! machine's free memory, and one started under `ulimit -v` under `RLIMIT_AS`. Comparing an
//! estimate with free memory alone lets a run start there that the allocator then aborts.

/// Bytes this process may still allocate, or `None` where the system says nothing.
///
/// On Linux, the smallest of `MemAvailable`, each enclosing cgroup's limit less its usage
/// (reclaimable page cache counted as free), and `RLIMIT_AS` less the address space in use.
/// Elsewhere, `None`: the size check is then skipped, and the setup says so nowhere, because
/// the system gives no figure to compare with.
pub fn memory_available() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        linux_available()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn parse_meminfo(text: &str) -> Option<u64> {
    kib_field(text, "MemAvailable:")
}

/// The value of a `Name:   123 kB` line, in bytes.
pub(super) fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The memory cgroup directories that enclose this process, innermost first, from a
/// `/proc/self/cgroup` text: for cgroup v2 (`0::/path`) under `root`, for v1 (a line whose
/// controllers include `memory`) under `root/memory`. Every ancestor up to the mount is listed,
/// since a limit set on a parent binds its children.
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    One,
    Two,
}

/// What a cgroup still allows: its limit less its usage, with the inactive page cache (which the
/// kernel reclaims before it refuses an allocation) counted as free. `None` without a limit.
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

#[cfg(target_os = "linux")]
fn linux_available() -> Option<u64> {
    let free = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| parse_meminfo(&t));
    [free, cgroup_room_now(), address_space_left()]
        .into_iter()
        .flatten()
        .min()
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
#[cfg(target_os = "linux")]
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
    let mapped = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| kib_field(&t, "VmSize:"))
        .unwrap_or(0);
    Some(limit.rlim_cur.saturating_sub(mapped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_from_meminfo() {
        let text = "MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_meminfo(text), Some(2 << 20));
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
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
