import FitBaseCore
import Foundation
import Observation

/// A workout's detail screen (seed 001): the premium lock (leading to the paywall), starting the workout, playing its
/// video through an expiring link kept fresh while it plays, and logging its completion with rating, energy before and
/// after, and notes. Analytics hears started, completed and failed — ids and failure kinds only, never the ratings or
/// notes.
@MainActor @Observable
public final class WorkoutDetailModel {
    /// Where the session stands.
    public enum Session: Sendable, Equatable {
        /// Not started.
        case idle
        /// Started at this instant.
        case inProgress(startedAt: Date)
        /// Logged.
        case completed(LoggedWorkout)
    }

    /// The workout's id.
    public let workoutID: WorkoutID
    /// The workout (`nil` until loaded).
    public private(set) var detail: WorkoutDetail?
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?
    /// Set when the user asked for something their tier does not include: present the paywall with it.
    public private(set) var paywall: UpgradePrompt?
    public private(set) var session: Session = .idle
    /// The completion form, checked by Core's ``WorkoutLogRules`` (the server's): minutes, rating and energy, notes.
    /// Minutes trained as the user corrected them; `nil` logs ``measuredMinutes``.
    public var durationMinutes: Int?
    public var rating: Int?
    public var energyBefore: Int?
    public var energyAfter: Int?
    public var notes = ""
    /// The form's problems per field.
    public private(set) var fieldErrors: [String: String] = [:]
    public private(set) var isSaving = false
    /// The video and the link the player reads while playback is on (``startPlayback()`` to ``stopPlayback()``); a new
    /// link replaces it shortly before it expires, and when the player reports the link refused.
    public private(set) var video: WorkoutMediaLink?
    /// The URL to hand the player (`nil` until playback starts).
    public var videoURL: URL? { video?.link.url }

    private let catalog: any CatalogService
    private let history: any HistoryService
    private let analytics: any AnalyticsService
    private let clock: any KitClock
    private let media: any MediaService
    /// Sleeps until the video link is due for renewal, then renews it (while playback is on).
    private var linkRenewal: Task<Void, Never>?
    private var isPlaying = false

    /// A model of the workout `workoutID` over the services of `dependencies`.
    public init(workoutID: WorkoutID, dependencies: FitBaseDependencies) {
        self.workoutID = workoutID
        catalog = dependencies.catalog
        history = dependencies.history
        analytics = dependencies.analytics
        clock = dependencies.clock
        media = dependencies.media
    }

    /// The video is withheld until the user upgrades.
    public var isLocked: Bool { detail?.isVideoLocked ?? false }
    /// The premium badge shows.
    public var isPremium: Bool { detail?.workout.isPremium ?? false }

    /// Loads the workout.
    public func load(policy: CachePolicy = .cacheFirst) async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            detail = try await catalog.workout(id: workoutID, policy: policy).value
            error = nil
        } catch {
            present(error)
        }
    }

    /// Starts the workout, or — when it is locked — asks for the paywall.
    public func start() {
        guard let detail else { return }
        if detail.isVideoLocked {
            paywall = UpgradePrompt(requiredTier: detail.requiredTier ?? .premium, feature: .premiumContent)
            return
        }
        session = .inProgress(startedAt: clock.now)
        analytics.track(.workoutStarted(workoutID: workoutID))
    }

    /// Playback starts: reads the video's expiring link (or, when the workout is locked, asks for the paywall) and keeps
    /// it fresh — renewed ``MediaLink/renewalMargin`` before it expires — until ``stopPlayback()``. A premium video's
    /// link is issued only while the user is entitled, so a lapsed subscription stops at the next renewal.
    public func startPlayback() async {
        guard let detail else { return }
        if detail.isVideoLocked {
            paywall = UpgradePrompt(requiredTier: detail.requiredTier ?? .premium, feature: .premiumContent)
            return
        }
        isPlaying = true
        await renewVideoLink()
    }

    /// The player was refused by the video's URL (HTTP 401 or 403: the link expired — a device asleep past the renewal —
    /// or was refused): a new link now, when playback is on.
    public func playbackRefused(status: Int) async {
        guard isPlaying, status == 401 || status == 403 else { return }
        await renewVideoLink()
    }

    /// Playback ends: the link is dropped and no longer renewed.
    public func stopPlayback() {
        isPlaying = false
        linkRenewal?.cancel()
        linkRenewal = nil
        video = nil
    }

    /// Reads a new video link and schedules its renewal; a failure (offline, the entitlement gone) shows and stops
    /// renewing.
    private func renewVideoLink() async {
        linkRenewal?.cancel()
        linkRenewal = nil
        do throws(KitError) {
            let link = try await media.workoutMedia(workoutID, kind: .video)
            // Playback may have stopped (or a newer renewal begun) while the link was on its way.
            guard isPlaying, linkRenewal == nil else { return }
            video = link
            error = nil
            let delay = link.link.renewal(from: clock.now)
            let clock = clock
            linkRenewal = Task { [weak self] in
                do { try await clock.sleep(for: delay) } catch { return }
                guard let self, !Task.isCancelled else { return }
                self.linkRenewal = nil
                await self.renewVideoLink()
            }
        } catch {
            present(error)
        }
    }

    /// The paywall was dismissed (or the purchase unlocked the workout: reload first).
    public func dismissPaywall() {
        paywall = nil
    }

    /// The minutes since ``start()``, a started minute counting whole (the workout's length when it was not timed here).
    public var measuredMinutes: Int {
        if case .inProgress(let startedAt) = session { return Int((clock.now.timeIntervalSince(startedAt) / 60).rounded(.up)) }
        return detail?.workout.durationMinutes ?? 0
    }

    /// The form's problems per field, as Core's ``WorkoutLogRules`` state them; empty when it may be saved.
    public func problems() -> [String: String] {
        var fields: [String: String] = [:]
        for problem in WorkoutLogRules.problems(completion(at: clock.now).draft, now: clock.now) where fields[problem.field] == nil {
            fields[problem.field] = problem.message
        }
        return fields
    }

    /// What the form logs, completed at `now`.
    private func completion(at now: Date) -> WorkoutCompletion {
        let trimmed = notes.trimmingCharacters(in: .whitespacesAndNewlines)
        return WorkoutCompletion(
            workoutID: workoutID, completedAt: now, durationMinutes: durationMinutes ?? measuredMinutes, rating: rating,
            energyBefore: energyBefore, energyAfter: energyAfter, notes: trimmed.isEmpty ? nil : trimmed
        )
    }

    /// Logs the completed workout: ``durationMinutes``, else ``measuredMinutes``.
    public func complete() async {
        fieldErrors = problems()
        guard fieldErrors.isEmpty else {
            error = .invalid(fieldErrors)
            return
        }
        let completion = completion(at: clock.now)
        isSaving = true
        defer { isSaving = false }
        do throws(KitError) {
            let logged = try await history.log(completion)
            session = .completed(logged)
            error = nil
            analytics.track(.workoutCompleted(workoutID: workoutID))
        } catch {
            present(error)
            fieldErrors = error.fieldErrors
            analytics.track(.workoutFailed(workoutID: workoutID, reason: error.kind))
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure, feature: .premiumContent)
        if let upgrade = error?.upgrade { paywall = upgrade }
    }
}
