//! `gpulint explain RULE`: a rule's documentation, by id or name.

use gpulint::rules::Rule;

use super::{print, Exit, Failure, Outcome};

pub fn explain(id: &str) -> Outcome {
    match Rule::parse_or_suggest(id) {
        Ok(r) => {
            print(r.info().doc);
            Ok(Exit::Clean)
        }
        Err(message) => {
            eprintln!("error: {message}; `gpulint rules` lists them");
            Err(Failure::Error)
        }
    }
}
