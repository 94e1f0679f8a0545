//! Akka's IoT tutorial, ported: devices in groups behind a manager, and a query that
//! asks a whole group for its temperatures.
//!
//! Concepts: `Forward` (a request handed on with the duty to answer it),
//! `ctx.watch_with` (a message of the watcher's own when an actor stops, queued behind
//! everything that actor sent), `ctx.timers()` for a per-query timeout, a narrowed ref
//! as a reply address, and a child spawned per request.
//!
//! A `DeviceManager` routes each track request to the group it names, creating the
//! group on first use. It does not answer: it returns `Forward::to(&group, request)`,
//! and the group answers whoever asked, with the device's ref. A `DeviceGroup` spawns
//! its devices, lists them, and answers "all temperatures" by spawning a
//! `DeviceGroupQuery` for that one request. The query asks every device, watches
//! every device, and starts a timer; it answers once each device has a verdict:
//! `Temperature`, `TemperatureNotAvailable` (no reading yet), `DeviceNotAvailable`
//! (the device stopped before answering) or `DeviceTimedOut`.
//!
//! The query watches with `watch_with`, not `watch`, and the reason is the first edge
//! case below. `Terminated` is a signal: it travels ahead of the mailbox, so a device
//! that answers and stops at once could have its `Terminated` handled before its
//! answer, and a reading it did give would be reported as "not available". The
//! message `watch_with` queues comes after everything the device sent, so the answer
//! is always seen first.
//!
//! What to watch in the output: device-2 answers query 1 and passivates straight
//! after, and its reading is kept. Device-3 is busy calibrating when the query asks
//! and fails before it gets to the question: it is "device not available". Device-4
//! is still calibrating when the query's timer fires: "timed out". Device-5 has never
//! recorded anything: "no reading yet". Then the group, told by its own watches, no
//! longer lists the two devices that stopped, and query 2 only asks the three left.
//!
//! Run it with `cargo run --example iot`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tapio::Forward;
use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally, WAIT, within};
use tokio::sync::oneshot;

/// How long a query waits for the devices it asked. Device-4 never answers query 1,
/// so query 1 takes this long; every other answer comes within microseconds.
pub const QUERY_TIMEOUT: Duration = Duration::from_millis(300);

/// Where the actors of this example report, so that `run` can print what they did
/// and wait for each step instead of sleeping.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What the actors said, in order.
    pub lines: Lines,
    /// Marked after each line an actor says.
    pub said: Tally,
    /// Marked each time a group drops a device that stopped.
    pub dropped: Tally,
}

impl Report {
    fn say(&self, line: String) {
        self.lines.push(line);
        self.said.mark();
    }
}

// The device.

/// Record a reading, answered with [`TemperatureRecorded`].
#[message(reply = TemperatureRecorded)]
pub struct RecordTemperature {
    /// The reading, in degrees Celsius.
    pub value: f64,
}

/// A reading was recorded.
#[message]
pub struct TemperatureRecorded {
    /// The device that recorded it.
    pub device_id: String,
}

/// Ask a device for its last reading. The answer goes to `reply_to`, as a message:
/// a query wants answers in its mailbox, in order with what else it hears.
#[message]
pub struct ReadTemperature {
    /// Where the [`RespondTemperature`] goes.
    pub reply_to: ActorRef<RespondTemperature>,
}

/// A device's last reading, or `None` if it has not recorded one.
#[message]
pub struct RespondTemperature {
    /// The device answering.
    pub device_id: String,
    /// Its last reading.
    pub value: Option<f64>,
}

/// Stop the device.
#[message]
pub struct Passivate;

/// How a calibration ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibration {
    /// The device goes back to work.
    Passed,
    /// The device fails, and stops.
    Failed,
}

/// Calibrate the device: it does nothing else until `outcome` arrives, and what it
/// is asked meanwhile waits in its mailbox.
#[message]
pub struct Calibrate {
    /// How the calibration ends, when it does.
    pub outcome: oneshot::Receiver<Calibration>,
}

/// A calibration that failed: the device's failure, which stops it.
#[derive(Debug)]
pub struct CalibrationFailed {
    /// The device.
    pub device_id: String,
}

impl std::fmt::Display for CalibrationFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed its calibration", self.device_id)
    }
}

impl std::error::Error for CalibrationFailed {}

/// A thermometer: keeps its last reading and tells it to whoever asks.
#[derive(Debug, Clone)]
pub struct Device {
    device_id: String,
    last: Option<f64>,
    report: Report,
}

impl Device {
    /// A device that has recorded nothing yet.
    pub fn new(device_id: String, report: Report) -> Self {
        Self {
            device_id,
            last: None,
            report,
        }
    }
}

#[actor]
impl Device {
    fn record(&mut self, RecordTemperature { value }: RecordTemperature) -> TemperatureRecorded {
        self.last = Some(value);
        TemperatureRecorded {
            device_id: self.device_id.clone(),
        }
    }

    fn read(&mut self, ReadTemperature { reply_to }: ReadTemperature) {
        reply_to.tell(RespondTemperature {
            device_id: self.device_id.clone(),
            value: self.last,
        });
    }

    fn passivate(&mut self, _: Passivate) -> Behavior<DeviceMsg> {
        self.report.say(format!("{}: passivating", self.device_id));
        Behaviors::stopped()
    }

    async fn calibrate(
        &mut self,
        Calibrate { outcome }: Calibrate,
    ) -> Result<(), CalibrationFailed> {
        self.report.say(format!("{}: calibrating", self.device_id));
        if let Ok(Calibration::Passed) = outcome.await {
            self.report.say(format!("{}: calibrated", self.device_id));
            return Ok(());
        }
        self.report
            .say(format!("{}: calibration failed, stopping", self.device_id));
        // No supervision is declared, so the failure stops the device.
        Err(CalibrationFailed {
            device_id: self.device_id.clone(),
        })
    }
}

// The group and the manager.

/// Track a device in a group, answered with the device's ref. The manager and the
/// group both handle it: the manager hands it on to the group.
#[message(reply = DeviceRegistered)]
pub struct RequestTrackDevice {
    /// The group.
    pub group_id: String,
    /// The device.
    pub device_id: String,
}

/// The device a [`RequestTrackDevice`] was about, new or already tracked.
#[message]
pub struct DeviceRegistered {
    /// The device.
    pub device: ActorRef<DeviceMsg>,
}

/// Ask for the ids of a group's devices.
#[message]
pub struct RequestDeviceList {
    /// The group.
    pub group_id: String,
    /// Where the [`ReplyDeviceList`] goes.
    pub reply_to: ActorRef<ReplyDeviceList>,
}

/// A group's device ids, sorted.
#[message]
pub struct ReplyDeviceList {
    /// The ids.
    pub ids: Vec<String>,
}

/// Ask for the temperature of every device of a group.
#[message]
pub struct RequestAllTemperatures {
    /// Names the request in the answer.
    pub request_id: u64,
    /// The group.
    pub group_id: String,
    /// Where the [`RespondAllTemperatures`] goes.
    pub reply_to: ActorRef<RespondAllTemperatures>,
}

/// What one device gave a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TemperatureReading {
    /// Its last reading.
    Temperature(f64),
    /// It answered, with no reading yet.
    TemperatureNotAvailable,
    /// It stopped before it answered.
    DeviceNotAvailable,
    /// It did not answer before the query's timeout.
    DeviceTimedOut,
}

impl std::fmt::Display for TemperatureReading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Temperature(value) => write!(f, "{value:.1}"),
            Self::TemperatureNotAvailable => f.write_str("no reading yet"),
            Self::DeviceNotAvailable => f.write_str("device not available"),
            Self::DeviceTimedOut => f.write_str("timed out"),
        }
    }
}

/// The answer to a [`RequestAllTemperatures`]: one verdict per device, by id.
#[message]
pub struct RespondAllTemperatures {
    /// The request answered.
    pub request_id: u64,
    /// Each device's verdict.
    pub temperatures: BTreeMap<String, TemperatureReading>,
}

/// What `watch_with` delivers when a device stops, to its group and to a query.
#[message]
pub struct DeviceTerminated(pub String);

/// The devices of one group: spawns them, lists them, and drops those that stop.
#[derive(Debug, Clone)]
pub struct DeviceGroup {
    devices: BTreeMap<String, ActorRef<DeviceMsg>>,
    report: Report,
}

impl DeviceGroup {
    /// A group with no devices yet.
    pub fn new(report: Report) -> Self {
        Self {
            devices: BTreeMap::new(),
            report,
        }
    }
}

#[actor]
impl DeviceGroup {
    fn track(
        &mut self,
        ctx: &mut Ctx<Self>,
        request: RequestTrackDevice,
    ) -> Result<DeviceRegistered, tapio::SpawnError> {
        if let Some(device) = self.devices.get(&request.device_id) {
            return Ok(DeviceRegistered {
                device: device.clone(),
            });
        }
        let id = request.device_id;
        let device = ctx.spawn(Device::new(id.clone(), self.report.clone()), &id)?;
        ctx.watch_with(&device, DeviceTerminated(id.clone()));
        self.devices.insert(id, device.clone());
        Ok(DeviceRegistered { device })
    }

    fn list(&mut self, RequestDeviceList { reply_to, .. }: RequestDeviceList) {
        reply_to.tell(ReplyDeviceList {
            ids: self.devices.keys().cloned().collect(),
        });
    }

    fn device_terminated(&mut self, DeviceTerminated(id): DeviceTerminated) {
        self.devices.remove(&id);
        self.report.dropped.mark();
    }

    fn all_temperatures(
        &mut self,
        ctx: &mut Ctx<Self>,
        request: RequestAllTemperatures,
    ) -> Result<(), tapio::SpawnError> {
        if self.devices.is_empty() {
            request.reply_to.tell(RespondAllTemperatures {
                request_id: request.request_id,
                temperatures: BTreeMap::new(),
            });
            return Ok(());
        }
        // One child per request: its state is that request's, and it ends with it.
        let query = device_group_query(
            self.devices.clone(),
            request.request_id,
            request.reply_to,
            QUERY_TIMEOUT,
            self.report.clone(),
        );
        ctx.spawn_anonymous(query)?;
        Ok(())
    }
}

/// What `watch_with` delivers to the manager when a group stops.
#[message]
pub struct GroupTerminated(pub String);

/// Routes each request to the group it names, creating groups on first use.
#[derive(Debug, Clone)]
pub struct DeviceManager {
    groups: BTreeMap<String, ActorRef<DeviceGroupMsg>>,
    report: Report,
}

impl DeviceManager {
    /// A manager with no groups yet.
    pub fn new(report: Report) -> Self {
        Self {
            groups: BTreeMap::new(),
            report,
        }
    }
}

#[actor]
impl DeviceManager {
    fn track(
        &mut self,
        ctx: &mut Ctx<Self>,
        request: RequestTrackDevice,
    ) -> Result<Forward<DeviceRegistered>, tapio::SpawnError> {
        let group = match self.groups.get(&request.group_id) {
            Some(group) => group.clone(),
            None => {
                let id = request.group_id.clone();
                let group = ctx.spawn(DeviceGroup::new(self.report.clone()), &id)?;
                ctx.watch_with(&group, GroupTerminated(id.clone()));
                self.groups.insert(id, group.clone());
                group
            }
        };
        // The group answers whoever asked the manager; the manager is free at once.
        Ok(Forward::to(&group, request))
    }

    fn list(&mut self, request: RequestDeviceList) {
        match self.groups.get(&request.group_id) {
            Some(group) => group.tell(request),
            None => request.reply_to.tell(ReplyDeviceList { ids: Vec::new() }),
        }
    }

    fn all_temperatures(&mut self, request: RequestAllTemperatures) {
        match self.groups.get(&request.group_id) {
            Some(group) => group.tell(request),
            None => request.reply_to.tell(RespondAllTemperatures {
                request_id: request.request_id,
                temperatures: BTreeMap::new(),
            }),
        }
    }

    fn group_terminated(&mut self, GroupTerminated(id): GroupTerminated) {
        self.groups.remove(&id);
    }
}

// The query.

/// The query's own timer, fired when it has waited long enough.
#[message]
pub struct CollectionTimeout;

/// One request for all temperatures: a verdict per device, then one answer.
#[derive(Debug)]
pub struct DeviceGroupQuery {
    request_id: u64,
    requester: ActorRef<RespondAllTemperatures>,
    waiting: BTreeSet<String>,
    verdicts: BTreeMap<String, TemperatureReading>,
}

/// The query for `devices`, answering `requester` within `timeout`. At its start it
/// asks and watches every device, and starts its timer.
pub fn device_group_query(
    devices: BTreeMap<String, ActorRef<DeviceMsg>>,
    request_id: u64,
    requester: ActorRef<RespondAllTemperatures>,
    timeout: Duration,
    report: Report,
) -> Behavior<DeviceGroupQueryMsg> {
    Behaviors::setup_once(move |ctx| {
        // The query's own ref, as the one message a device sends it.
        let answers: ActorRef<RespondTemperature> = ctx.self_ref().narrow();
        for (id, device) in &devices {
            // Not `watch`: its `Terminated` could overtake the answer the device
            // gave just before it stopped.
            ctx.watch_with(device, DeviceTerminated(id.clone()));
            device.tell(ReadTemperature {
                reply_to: answers.clone(),
            });
        }
        ctx.timers()
            .start_single_timer("collection-timeout", CollectionTimeout, timeout);
        report.say(format!(
            "query {request_id}: asked {} devices",
            devices.len()
        ));
        DeviceGroupQuery {
            request_id,
            requester,
            waiting: devices.into_keys().collect(),
            verdicts: BTreeMap::new(),
        }
    })
}

#[actor]
impl DeviceGroupQuery {
    fn answered(
        &mut self,
        RespondTemperature { device_id, value }: RespondTemperature,
    ) -> Behavior<DeviceGroupQueryMsg> {
        let reading = value.map_or(
            TemperatureReading::TemperatureNotAvailable,
            TemperatureReading::Temperature,
        );
        self.settle(device_id, reading)
    }

    fn device_terminated(
        &mut self,
        DeviceTerminated(id): DeviceTerminated,
    ) -> Behavior<DeviceGroupQueryMsg> {
        // A device that answered and then stopped is no longer waited for: its
        // answer came first, so it keeps its reading.
        self.settle(id, TemperatureReading::DeviceNotAvailable)
    }

    fn timed_out(&mut self, _: CollectionTimeout) -> Behavior<DeviceGroupQueryMsg> {
        for id in std::mem::take(&mut self.waiting) {
            self.verdicts.insert(id, TemperatureReading::DeviceTimedOut);
        }
        self.answer_when_complete()
    }
}

impl DeviceGroupQuery {
    /// The first verdict for a device is its verdict; later news about it is not.
    fn settle(&mut self, id: String, reading: TemperatureReading) -> Behavior<DeviceGroupQueryMsg> {
        if self.waiting.remove(&id) {
            self.verdicts.insert(id, reading);
        }
        self.answer_when_complete()
    }

    fn answer_when_complete(&mut self) -> Behavior<DeviceGroupQueryMsg> {
        if !self.waiting.is_empty() {
            return Behaviors::same();
        }
        self.requester.tell(RespondAllTemperatures {
            request_id: self.request_id,
            temperatures: std::mem::take(&mut self.verdicts),
        });
        // Stopping cancels the timer too.
        Behaviors::stopped()
    }
}

// The run.

async fn track(
    manager: &ActorRef<DeviceManagerMsg>,
    device_id: &str,
) -> Result<ActorRef<DeviceMsg>, ExampleError> {
    let registered = manager
        .ask(RequestTrackDevice {
            group_id: "floor-1".into(),
            device_id: device_id.into(),
        })
        .timeout(WAIT)
        .await?;
    Ok(registered.device)
}

async fn record(
    device: &ActorRef<DeviceMsg>,
    value: f64,
    lines: &Lines,
) -> Result<(), ExampleError> {
    let recorded = device
        .ask(RecordTemperature { value })
        .timeout(WAIT)
        .await?;
    lines.push(format!("{}: recorded {value:.1}", recorded.device_id));
    Ok(())
}

async fn list(manager: &ActorRef<DeviceManagerMsg>, lines: &Lines) -> Result<(), ExampleError> {
    let listed = manager
        .ask_with(|reply_to| RequestDeviceList {
            group_id: "floor-1".into(),
            reply_to,
        })
        .timeout(WAIT)
        .await?;
    lines.push(format!("floor-1: devices [{}]", listed.ids.join(", ")));
    Ok(())
}

fn print_answer(answer: RespondAllTemperatures, lines: &Lines) {
    // A `BTreeMap`, so the devices come sorted by id.
    for (id, reading) in answer.temperatures {
        lines.push(format!("query {}: {id} = {reading}", answer.request_id));
    }
}

/// Calibrate `device` until the returned sender says how it ended, once the device
/// has said it started.
async fn start_calibrating(
    device: &ActorRef<DeviceMsg>,
    report: &Report,
) -> Result<oneshot::Sender<Calibration>, ExampleError> {
    let (ends, outcome) = oneshot::channel();
    device.tell(Calibrate { outcome });
    within("a device to start calibrating", report.said.reached(1)).await?;
    Ok(ends)
}

/// Run the example and return what the devices, the queries and the requester saw,
/// in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let report = Report::default();
    let lines = report.lines.clone();
    let system = ActorSystem::new("iot")?;
    let manager = system.spawn(DeviceManager::new(report.clone()), "devices")?;

    let one = track(&manager, "device-1").await?;
    let two = track(&manager, "device-2").await?;
    let three = track(&manager, "device-3").await?;
    let four = track(&manager, "device-4").await?;
    // Device-5 is never sent anything: it has no reading to give.
    track(&manager, "device-5").await?;
    list(&manager, &lines).await?;
    let again = track(&manager, "device-1").await?;
    lines.push(format!(
        "manager: tracking device-1 again gives the same device: {}",
        again == one
    ));

    record(&one, 21.5, &lines).await?;
    record(&two, 19.0, &lines).await?;
    let fail_three = start_calibrating(&three, &report).await?;
    let pass_four = start_calibrating(&four, &report).await?;

    // Query 1. The request goes now; its answer is awaited once the edge cases are
    // set up.
    let first = manager
        .ask_with(|reply_to| RequestAllTemperatures {
            request_id: 1,
            group_id: "floor-1".into(),
            reply_to,
        })
        .timeout(WAIT);
    within("query 1 to ask", report.said.reached(1)).await?;
    // Every device now holds query 1's question. Device-2 will answer it, then
    // passivate, since `Passivate` queues behind the question.
    two.tell(Passivate);
    within("device-2 to passivate", report.said.reached(1)).await?;
    // Device-3 fails before it reaches the question.
    let _ = fail_three.send(Calibration::Failed);
    within("device-3 to fail", report.said.reached(1)).await?;
    // Device-4 stays busy, so query 1's timer decides for it.
    print_answer(first.await?, &lines);

    // The group heard both stops through its own watches.
    within("the group to drop two devices", report.dropped.reached(2)).await?;
    list(&manager, &lines).await?;

    // Device-4 goes back to work (its answer to query 1 finds nobody waiting), and
    // records a reading.
    let _ = pass_four.send(Calibration::Passed);
    within("device-4 to finish calibrating", report.said.reached(1)).await?;
    record(&four, 23.0, &lines).await?;
    let second = manager
        .ask_with(|reply_to| RequestAllTemperatures {
            request_id: 2,
            group_id: "floor-1".into(),
            reply_to,
        })
        .timeout(WAIT)
        .await?;
    within("query 2 to ask", report.said.reached(1)).await?;
    print_answer(second, &lines);

    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
