//! `gpulint inventory PATHS`: every workload and container with its GPU, CPU and memory
//! requests and limits, as a table, JSON or CSV.

use gpulint::cli::{InventoryArgs, InventoryFormat};
use gpulint::lint::Selection;
use gpulint::report::inventory;

use super::setup::{linter_for, load_config};
use super::{print, Exit, Outcome};

pub fn inventory(args: &InventoryArgs) -> Outcome {
    let common = &args.common;
    let config = load_config(common)?;
    let linter = linter_for(config, Selection::default(), common);
    let loaded = linter.load(&common.paths);
    let workloads = inventory::workloads(
        &linter,
        &loaded.files,
        &loaded.units,
        &loaded.releases,
        &loaded.placement,
    );
    match args.format {
        InventoryFormat::Json => print(&format!("{workloads:#}\n")),
        InventoryFormat::Table => print(&inventory::table(&linter, &workloads)),
        InventoryFormat::Csv => print(&inventory::csv(&linter, &workloads)),
    }
    for e in &loaded.errors {
        if e.file.is_empty() {
            // A path that could not be walked: the message names it.
            eprintln!("error: {}", e.message);
        } else {
            eprintln!("error: {}:{}:{}: {}", e.file, e.line, e.column, e.message);
        }
    }
    if loaded.errors.is_empty() {
        Ok(Exit::Clean)
    } else {
        Ok(Exit::Error)
    }
}
