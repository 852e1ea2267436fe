//! The processes a test started: the Chromium a `webagent` process runs,
//! whether a process is still alive, and signals sent to it.

use std::process::Command;

/// The parent pid of a process, from /proc.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The process's command name, as /proc gives it.
pub fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The main Chromium process started (through its guardian) by `root`.
pub fn browser_process_of(root: u32) -> Option<u32> {
    let pids: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.into_iter().find(|&pid| {
        let name = command_name(pid);
        if !name.starts_with("chromium") && !name.starts_with("chrome") {
            return false;
        }
        // The browser process, not a renderer: its parent is not Chromium.
        let Some(parent) = parent_of(pid) else {
            return false;
        };
        if command_name(parent).starts_with("chrom") {
            return false;
        }
        let mut at = parent;
        for _ in 0..10 {
            if at == root {
                return true;
            }
            match parent_of(at) {
                Some(up) if up > 1 => at = up,
                _ => return false,
            }
        }
        false
    })
}

/// Whether the process runs (exists and is not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = &stat[stat.rfind(')')? + 2..];
            rest.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// Sends `signal` (as `kill` spells it: `-TERM`, `-9`) to `pid`.
pub fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}
