//! `webagent skill`: the skill file coding agents load, its actions taken
//! from the catalog.

use webagent::actions::Catalog;

use crate::Sessions;

#[test]
fn skill_lists_every_catalog_action_and_installs_without_clobbering() {
    let s = Sessions::new("skill");
    let text = s.ok(&["skill"]);
    assert!(
        text.starts_with("---\nname: webagent\ndescription: "),
        "{text}"
    );
    for spec in Catalog::builtin().specs() {
        assert!(
            text.contains(&format!("- `{}", spec.name)),
            "{} is not in the skill",
            spec.name
        );
    }
    for word in ["session start", "--delta", "<secret>", "Exit codes"] {
        assert!(text.contains(word), "{word} is not in the skill");
    }
    let dir = s.home.join("skills");
    let dir_arg = dir.display().to_string();
    s.ok(&["skill", "--install", &dir_arg]);
    let file = dir.join("webagent").join("SKILL.md");
    assert_eq!(std::fs::read_to_string(&file).expect("installed"), text);
    // A file of the person's own is not replaced without --force.
    std::fs::write(&file, "my own notes").expect("writing");
    let refused = s.run(&["skill", "--install", &dir_arg]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(&file).expect("kept"),
        "my own notes"
    );
    s.ok(&["skill", "--install", &dir_arg, "--force"]);
    assert_eq!(std::fs::read_to_string(&file).expect("replaced"), text);
}
