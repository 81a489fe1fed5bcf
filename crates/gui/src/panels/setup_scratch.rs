//! The Setup tab's "Scratch filesystems" section: the list of fsynclab's loop-image
//! filesystems (`ScratchManager::list`), a form that creates one (or crash-tests the
//! workload on a recording device made the same way: `setup_crash`), and per-row "Use as
//! target" and "Destroy" (confirmed in a dialog).
//!
//! Listing, creating and destroying run on background threads (they shell out to losetup,
//! mkfs and mount); the UI only polls their channels.

use egui::{Button, Grid, RichText, TextEdit, Ui};

use super::setup_fields::error_lines;
use crate::Cx;
use crate::task::Task;
use fsynclab::scratch::{
    Backing, CreateRequest, FsKind, ScratchManager, ScratchRecipe, ScratchStatus,
    check_mkfs_options, check_mount_options,
};
use fsynclab::spec::{format_size, parse_size};

/// The filesystems the form offers.
pub(super) const FS_KINDS: [FsKind; 3] = [FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs];

/// The scratch section's own state.
#[derive(Debug)]
pub(super) struct ScratchPanel {
    /// The manager; `None` until first needed (then from the default state directory).
    manager: Option<ScratchManager>,
    manager_error: Option<String>,
    list: Vec<ScratchStatus>,
    list_error: Option<String>,
    loaded: bool,
    loading: Option<Task<Result<Vec<ScratchStatus>, String>>>,
    fs: FsKind,
    size_text: String,
    mkfs_opts: String,
    mount_opts: String,
    ram: bool,
    loop_dio: bool,
    creating: Option<Task<Result<ScratchRecipe, String>>>,
    create_error: Option<String>,
    note: Option<String>,
    /// The name the destroy dialog asks about.
    confirm: Option<String>,
    destroying: Option<(String, Task<Result<(), String>>)>,
    destroy_error: Option<String>,
    /// The crash test on a recording device made as this form describes.
    crash: super::setup_crash::CrashPanel,
}

impl Default for ScratchPanel {
    fn default() -> Self {
        Self {
            manager: None,
            manager_error: None,
            list: Vec::new(),
            list_error: None,
            loaded: false,
            loading: None,
            fs: FsKind::Ext4,
            size_text: "1G".into(),
            mkfs_opts: String::new(),
            mount_opts: String::new(),
            ram: false,
            loop_dio: false,
            creating: None,
            create_error: None,
            note: None,
            confirm: None,
            destroying: None,
            destroy_error: None,
            crash: Default::default(),
        }
    }
}

impl ScratchPanel {
    /// Uses `manager` instead of the one on the default state directory (tests).
    pub(super) fn set_manager(&mut self, manager: ScratchManager) {
        self.manager = Some(manager);
        self.manager_error = None;
        self.loaded = false;
    }

    /// Takes a running crash test's answer (see `setup_crash`).
    pub(super) fn poll_crash_test(&mut self, cx: &mut Cx) {
        self.crash.poll(cx);
    }

    /// Serves a crash test's recording device with `program` (tests).
    pub(super) fn set_crash_daemon(&mut self, program: fsynclab::crashdev::DaemonProgram) {
        self.crash.set_daemon(program);
    }

    /// The manager, made from the default state directory on first use.
    pub(super) fn manager(&mut self) -> Result<ScratchManager, String> {
        if self.manager.is_none() {
            match ScratchManager::default_state_dir() {
                Ok(dir) => self.manager = Some(ScratchManager::new(dir)),
                Err(e) => self.manager_error = Some(e.to_string()),
            }
        }
        match &self.manager {
            Some(m) => Ok(m.clone()),
            None => Err(self.manager_error.clone().unwrap_or_default()),
        }
    }

    /// Draws the section (heading, list, form, dialog).
    pub(super) fn ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        if !self.loaded {
            self.loaded = true;
            self.start_list(ui.ctx());
        }
        self.poll(ui.ctx(), cx);

        ui.heading("Scratch filesystems");
        ui.weak(
            "Fresh loop-image filesystems made and mounted by fsynclab (needs root), so a \
             filesystem or mount option can be compared on identical ground.",
        );
        ui.horizontal(|ui| {
            let busy = self.loading.is_some();
            if ui
                .add_enabled(!busy, Button::new("Refresh scratch"))
                .on_hover_text("list the scratch filesystems again")
                .clicked()
            {
                self.start_list(ui.ctx());
            }
            if busy {
                ui.spinner();
                ui.weak("listing…");
            }
        });
        for e in [&self.manager_error, &self.list_error, &self.destroy_error]
            .into_iter()
            .flatten()
        {
            error_lines(ui, std::slice::from_ref(e));
        }
        if let Some((name, _)) = &self.destroying {
            ui.weak(format!("destroying {name}…"));
        }
        self.list_ui(ui, cx);
        ui.add_space(6.0);
        self.create_ui(ui);
        let state_dir = self.manager().map(|m| m.state_dir().to_path_buf());
        let device = super::setup_crash::DeviceForm {
            fs: self.fs,
            size: parse_size(&self.size_text).map_err(|e| e.to_string()),
            mkfs_opts: &self.mkfs_opts,
            mount_opts: &self.mount_opts,
            refused: check_mkfs_options(self.fs, &self.mkfs_opts).is_err()
                || check_mount_options(self.fs, &self.mount_opts).is_err(),
            state_dir,
        };
        self.crash.ui(ui, cx, device);
        self.confirm_ui(ui);
    }

    fn start_list(&mut self, ctx: &egui::Context) {
        let manager = match self.manager() {
            Ok(m) => m,
            Err(_) => return,
        };
        let spawned = Task::spawn("fsynclab-scratch-list", Some(ctx), move || {
            manager.list().map_err(|e| crate::names::words(&e))
        });
        match spawned {
            Ok(task) => self.loading = Some(task),
            Err(e) => self.list_error = Some(format!("cannot start the scratch listing: {e}")),
        }
    }

    /// Takes the answers of the listing, create and destroy threads.
    fn poll(&mut self, ctx: &egui::Context, cx: &mut Cx) {
        match Task::take_done(&mut self.loading) {
            Some(Ok(Ok(list))) => {
                self.list = list;
                self.list_error = None;
            }
            Some(Ok(Err(e))) => self.list_error = Some(e),
            Some(Err(_lost)) => {
                self.list_error = Some("the scratch listing stopped without an answer".into());
            }
            None => {}
        }
        if let Some(answer) = Task::take_done(&mut self.creating) {
            let answer = answer
                .unwrap_or_else(|_lost| Err("the create thread stopped without an answer".into()));
            match answer {
                Ok(recipe) => {
                    let mount = recipe.mount_point.display().to_string();
                    self.note = Some(format!(
                        "{} ready on {}, mounted at {mount}; it is now the target",
                        recipe.name, recipe.device
                    ));
                    cx.status
                        .info(format!("scratch filesystem {} created", recipe.name));
                    cx.state.target = mount;
                    self.create_error = None;
                }
                Err(e) => self.create_error = Some(e),
            }
            self.start_list(ctx);
        }
        if let Some((name, task)) = &self.destroying {
            let answer = task.poll().map(|done| {
                done.unwrap_or_else(|_lost| {
                    Err("the destroy thread stopped without an answer".into())
                })
            });
            if let Some(answer) = answer {
                match answer {
                    Ok(()) => {
                        cx.status
                            .info(format!("scratch filesystem {name} destroyed"));
                        self.destroy_error = None;
                    }
                    Err(e) => self.destroy_error = Some(e),
                }
                self.destroying = None;
                self.start_list(ctx);
            }
        }
    }

    fn list_ui(&mut self, ui: &mut Ui, cx: &mut Cx) {
        if self.list.is_empty() {
            if self.loading.is_none() && self.list_error.is_none() {
                ui.weak("No scratch filesystems yet; create one below.");
            }
            return;
        }
        let busy = self.destroying.is_some();
        let mut confirm = None;
        ui.push_id("scratch-list", |ui| {
            Grid::new("scratch-grid")
                .striped(true)
                .num_columns(8)
                .spacing([10.0, 4.0])
                .show(ui, |ui| {
                    for h in [
                        "Name", "Actions", "FS", "Size", "Backing", "Mounted", "Device", "Options",
                    ] {
                        ui.label(RichText::new(h).strong());
                    }
                    ui.end_row();
                    for s in &self.list {
                        let r = &s.recipe;
                        ui.label(&r.name)
                            .on_hover_text(r.mount_point.display().to_string());
                        ui.horizontal(|ui| {
                            let mount = r.mount_point.display().to_string();
                            if ui
                                .add_enabled(s.mounted, Button::new("Use as target"))
                                .on_hover_text(format!("run in {mount}"))
                                .on_disabled_hover_text("not mounted: destroy and recreate it")
                                .clicked()
                            {
                                cx.state.target = mount;
                            }
                            if ui
                                .add_enabled(!busy, Button::new("Destroy"))
                                .on_hover_text("unmount it and delete its image")
                                .clicked()
                            {
                                confirm = Some(r.name.clone());
                            }
                        });
                        ui.label(r.fs.as_str());
                        ui.label(format_size(r.size_bytes));
                        ui.label(r.backing.describe());
                        if s.mounted {
                            ui.label("yes");
                        } else {
                            ui.colored_label(ui.visuals().warn_fg_color, "no");
                        }
                        ui.label(&r.device);
                        ui.label(options(&r.mount_opts, &r.mkfs_opts))
                            .on_hover_text("mount -o options; mkfs options");
                        ui.end_row();
                    }
                });
        });
        if confirm.is_some() {
            self.confirm = confirm;
        }
    }

    fn create_ui(&mut self, ui: &mut Ui) {
        ui.label(RichText::new("New scratch filesystem").strong());
        Grid::new("scratch-form")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                let label = ui.label("Filesystem");
                egui::ComboBox::from_id_salt("scratch-fs")
                    .selected_text(self.fs.as_str())
                    .show_ui(ui, |ui| {
                        for fs in FS_KINDS {
                            ui.selectable_value(&mut self.fs, fs, fs.as_str())
                                .on_hover_text(format!("made with {}", fs.mkfs_tool()));
                        }
                    })
                    .response
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Scratch size");
                ui.add(TextEdit::singleline(&mut self.size_text).desired_width(110.0))
                    .labelled_by(label.id)
                    .on_hover_text("image size, e.g. 1G (at least 300M)");
                ui.end_row();
                let label = ui.label("mkfs options");
                ui.add(TextEdit::singleline(&mut self.mkfs_opts).hint_text("-O ^has_journal"))
                    .labelled_by(label.id)
                    .on_hover_text(
                        "extra mkfs arguments, split like a shell would (no shell runs)",
                    );
                ui.end_row();
                let label = ui.label("Mount options");
                ui.add(TextEdit::singleline(&mut self.mount_opts).hint_text("nossd"))
                    .labelled_by(label.id)
                    .on_hover_text("passed to mount -o as typed; empty: the defaults");
                ui.end_row();
                ui.label("Backing");
                ui.horizontal(|ui| {
                    ui.radio_value(&mut self.ram, false, "disk")
                        .on_hover_text("the image lives in the data directory");
                    ui.radio_value(&mut self.ram, true, "ram")
                        .on_hover_text("the image lives in /dev/shm (memory)");
                    ui.checkbox(&mut self.loop_dio, "loop direct I/O")
                        .on_hover_text("losetup --direct-io=on: no double caching");
                });
                ui.end_row();
            });
        let size = parse_size(&self.size_text);
        if let Err(e) = &size {
            error_lines(ui, &[format!("size: {e}")]);
        }
        // The library's allow-list, shown inline: nothing is made until the options pass.
        let refused: Vec<String> = [
            check_mkfs_options(self.fs, &self.mkfs_opts).err(),
            check_mount_options(self.fs, &self.mount_opts).err(),
        ]
        .into_iter()
        .flatten()
        .map(|e| crate::names::words(&e))
        .collect();
        error_lines(ui, &refused);
        ui.horizontal(|ui| {
            let busy = self.creating.is_some();
            let enabled =
                !busy && size.is_ok() && refused.is_empty() && self.manager_error.is_none();
            if ui
                .add_enabled(enabled, Button::new("Create scratch filesystem"))
                .on_hover_text("make, mount and use it as the target (runs in the background)")
                .clicked()
                && let Ok(size) = size
            {
                self.start_create(ui.ctx(), size);
            }
            if busy {
                ui.spinner();
                ui.weak("creating…");
            }
        });
        if let Some(e) = &self.create_error {
            error_lines(ui, std::slice::from_ref(e));
        } else if let Some(note) = &self.note {
            ui.label(note);
        }
    }

    fn start_create(&mut self, ctx: &egui::Context, size_bytes: u64) {
        let manager = match self.manager() {
            Ok(m) => m,
            Err(e) => {
                self.create_error = Some(e);
                return;
            }
        };
        let request = CreateRequest {
            name: None,
            fs: self.fs,
            size_bytes,
            mkfs_opts: self.mkfs_opts.trim().to_string(),
            mount_opts: self.mount_opts.trim().to_string(),
            backing: if self.ram {
                Backing::Ram
            } else {
                Backing::Disk
            },
            loop_direct_io: self.loop_dio,
            destroy_data_on: None,
        };
        let spawned = Task::spawn("fsynclab-scratch-create", Some(ctx), move || {
            manager
                .create(&request)
                .map_err(|e| crate::names::words(&e))
        });
        match spawned {
            Ok(task) => {
                self.creating = Some(task);
                self.create_error = None;
                self.note = None;
            }
            Err(e) => self.create_error = Some(format!("cannot start the create thread: {e}")),
        }
    }

    /// The destroy confirmation; Esc or a click outside cancels.
    fn confirm_ui(&mut self, ui: &mut Ui) {
        let Some(name) = self.confirm.clone() else {
            return;
        };
        let mut decision: Option<bool> = None;
        let modal =
            egui::Modal::new(egui::Id::unique("scratch-destroy-confirm")).show(ui.ctx(), |ui| {
                ui.heading(format!("Destroy {name}?"));
                ui.label(
                    "It is unmounted, its loop device detached and its image deleted, with every \
                 file on it. Runs already stored keep their results.",
                );
                ui.horizontal(|ui| {
                    if ui.button(RichText::new("Yes, destroy").strong()).clicked() {
                        decision = Some(true);
                    }
                    if ui.button("Cancel").clicked() {
                        decision = Some(false);
                    }
                });
            });
        if decision.is_none() && modal.should_close() {
            decision = Some(false);
        }
        match decision {
            Some(true) => {
                self.confirm = None;
                self.start_destroy(ui.ctx(), name);
            }
            Some(false) => self.confirm = None,
            None => {}
        }
    }

    fn start_destroy(&mut self, ctx: &egui::Context, name: String) {
        let manager = match self.manager() {
            Ok(m) => m,
            Err(e) => {
                self.destroy_error = Some(e);
                return;
            }
        };
        let which = name.clone();
        let spawned = Task::spawn("fsynclab-scratch-destroy", Some(ctx), move || {
            manager.destroy(&which).map_err(|e| crate::names::words(&e))
        });
        match spawned {
            Ok(task) => {
                self.destroying = Some((name, task));
                self.destroy_error = None;
            }
            Err(e) => self.destroy_error = Some(format!("cannot start the destroy thread: {e}")),
        }
    }
}

/// `-o nossd; mkfs -O ^has_journal`, or `defaults`.
fn options(mount: &str, mkfs: &str) -> String {
    let mut parts = Vec::new();
    if !mount.trim().is_empty() {
        parts.push(format!("-o {}", mount.trim()));
    }
    if !mkfs.trim().is_empty() {
        parts.push(format!("mkfs {}", mkfs.trim()));
    }
    if parts.is_empty() {
        "defaults".into()
    } else {
        parts.join("; ")
    }
}
