import FitBaseCore
import Foundation
import Synchronization

/// What every report says about the app: its version, platform, OS version and hardware model — never the device's
/// name or anything about its user.
public struct ReportedApp: Sendable, Equatable {
    public var appVersion: String
    public var platform: ConfigPlatform
    public var osVersion: String?
    public var deviceModel: String

    /// An app as given.
    public init(appVersion: String, platform: ConfigPlatform, osVersion: String?, deviceModel: String) {
        self.appVersion = appVersion
        self.platform = platform
        self.osVersion = osVersion
        self.deviceModel = deviceModel
    }

    /// This app: the bundle's version, this build's platform (`ios` elsewhere, where FitBase has no other), the OS's
    /// version and the hardware model (`uname`'s machine: `iPhone15,2`, `arm64`).
    public static func current(appVersion: String?) -> ReportedApp {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        var system = utsname()
        uname(&system)
        let machine = withUnsafeBytes(of: &system.machine) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
        return ReportedApp(
            appVersion: appVersion.flatMap(SemanticVersion.init)?.description ?? "0.0.0", platform: BuildPlatform.current ?? .ios,
            osVersion: "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)",
            deviceModel: AppReportRules.isDeviceModel(machine) ? machine : "unknown"
        )
    }
}

/// The app's errors, crashes and operation timings, sent to the server (``sendAppReports``) in batches — seed 004's
/// Crashlytics and Performance Monitoring without a third party and without user data: an error is a code and where it
/// happened, a crash its frames, a trace an operation and its duration (``AppReportRules`` says what may be sent; a
/// report that breaks a rule is dropped on the device, never sent).
///
/// The Kit reports on its own: leaderboard fetches (`leaderboard.fetch`), sync rounds (`sync.round`) and HealthKit
/// uploads (`health.upload`) are timed, and their failures reported as errors; `MetricKitReporter` forwards MetricKit's
/// crash diagnostics on Apple platforms.
public protocol ReportingService: Sendable {
    /// Queues `report` (stamped with the app's version and model by live services).
    func record(_ report: AppReport)
    /// Sends everything queued.
    func flush() async
    /// The app the reports are about.
    var app: ReportedApp { get }
}

extension ReportingService {
    /// Reports an error of the Kit's kind `kind` at `location` (a screen or operation name: `leaderboard`, `sync.push`).
    public func error(_ kind: KitError.Kind, at location: String) {
        record(.error(code: kind.rawValue, location: location, at: Date(), appVersion: app.appVersion, platform: app.platform, osVersion: app.osVersion, deviceModel: app.deviceModel))
    }

    /// Reports that `operation` took `milliseconds`.
    public func trace(_ operation: String, milliseconds: Int) {
        record(.trace(operation: operation, milliseconds: milliseconds, at: Date(), appVersion: app.appVersion, platform: app.platform, osVersion: app.osVersion, deviceModel: app.deviceModel))
    }

    /// Reports a crash: its frames, innermost first, symbolicated on the device.
    public func crash(exceptionType: String?, frames: [AppReport.Frame], at location: String? = nil) {
        record(AppReport(
            id: UUID(), kind: .crash, occurredAt: Date(), appVersion: app.appVersion, platform: app.platform, osVersion: app.osVersion,
            deviceModel: app.deviceModel, location: location, exceptionType: exceptionType, frames: frames))
    }

    /// Runs `body`, reporting how long it took as `operation` and, when it throws a ``KitError``, the error at `operation`.
    public func measure<T>(_ operation: String, _ body: () async throws(KitError) -> T) async throws(KitError) -> T {
        let start = ContinuousClock.now
        do throws(KitError) {
            let value = try await body()
            trace(operation, milliseconds: ReportedTime.milliseconds(since: start))
            return value
        } catch {
            if error.kind != .cancelled { self.error(error.kind, at: operation) }
            throw error
        }
    }
}

/// Durations as reports carry them.
enum ReportedTime {
    /// Whole milliseconds from `start` until now.
    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = start.duration(to: .now).components
        return Int(elapsed.seconds) * 1_000 + Int(elapsed.attoseconds / 1_000_000_000_000_000)
    }
}

/// Reports kept in memory: previews, tests, and apps that report elsewhere.
public final class RecordingReporter: ReportingService {
    private let kept = Mutex<[AppReport]>([])
    public let app: ReportedApp

    /// A reporter for `app`.
    public init(app: ReportedApp = ReportedApp(appVersion: "1.0.0", platform: .ios, osVersion: "17.0.0", deviceModel: "iPhone15,2")) {
        self.app = app
    }

    /// Every report recorded, oldest first.
    public var reports: [AppReport] { kept.withLock { $0 } }

    public func record(_ report: AppReport) {
        kept.withLock { $0.append(report) }
    }

    public func flush() async {}
}
