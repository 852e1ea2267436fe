//! The joined scripts hold every part in their folder, and every shared
//! part, once, and nothing else: a part left out of the `concat!` list,
//! or listed twice, would hand the page a broken function.

use super::{ACT_JS, OBSERVER_JS};

/// The text of every `.js` file in `folder` (under this module's folder).
fn parts(folder: &str) -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/browser/scripts")
        .join(folder);
    let mut parts: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the scripts' folder")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "js"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a part");
            (path.display().to_string(), text)
        })
        .collect();
    parts.sort();
    parts
}

/// The folder of the parts both scripts join in.
const SHARED: &str = "shared";

fn assert_joined_from(joined: &str, folder: &str) {
    let own = parts(folder);
    assert!(own.len() > 1, "{folder} has its parts");
    let all: Vec<(String, String)> = own.into_iter().chain(parts(SHARED)).collect();
    for (path, text) in &all {
        let first_line = text.lines().next().unwrap_or_default();
        assert!(
            !first_line.is_empty() && joined.contains(first_line),
            "{path} is missing from the joined script"
        );
        assert!(joined.contains(text.as_str()), "{path} is joined whole");
    }
    let total: usize = all.iter().map(|(_, text)| text.len()).sum();
    assert_eq!(
        total,
        joined.len(),
        "{folder}: each part once, nothing else"
    );
}

#[test]
fn the_observer_is_joined_from_all_of_its_parts() {
    assert_joined_from(OBSERVER_JS, "observer");
    assert!(OBSERVER_JS.starts_with("// webagent's page observer."));
    assert!(OBSERVER_JS.ends_with("  return 'installed';\n})()\n"));
}

#[test]
fn the_action_helper_is_joined_from_all_of_its_parts() {
    assert_joined_from(ACT_JS, "action_helper");
    assert!(ACT_JS.starts_with("// webagent's action helper."));
    assert!(ACT_JS.ends_with("  return 'installed';\n})()\n"));
}
