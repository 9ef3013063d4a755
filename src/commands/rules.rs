//! `gpulint rules`: the registry, one line per rule.

use gpulint::rules::{FixAvailability, RULES};

use super::{print, Exit, Outcome};

pub fn list() -> Outcome {
    let mut text = String::new();
    for r in RULES {
        let default = if r.enabled_by_default {
            ""
        } else {
            " (off by default)"
        };
        let fix = match r.fix {
            FixAvailability::Always => " [fixable]",
            FixAvailability::Sometimes => " [sometimes fixable]",
            FixAvailability::Never => "",
        };
        text.push_str(&format!(
            "{}  {:<38} {:<8} {}{}{}\n",
            r.id,
            r.name,
            r.severity.as_str(),
            r.summary,
            fix,
            default
        ));
    }
    print(&text);
    Ok(Exit::Clean)
}
