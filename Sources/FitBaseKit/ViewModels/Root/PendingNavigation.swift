import FitBaseClient
import FitBaseCore
import Foundation

/// A screen a link or a tapped push asked for that waits until it can show: for sign-in, for onboarding, across a
/// restart of the app.
public struct PendingNavigation: Sendable, Equatable, Codable {
    /// The screen.
    public var destination: AppModel.Destination
    /// The account it is for; `nil`: whoever signs in next (a link opened signed out).
    public var userID: UserID?

    /// A pending `destination` for `userID`.
    public init(destination: AppModel.Destination, userID: UserID?) {
        self.destination = destination
        self.userID = userID
    }
}

/// Where ``AppModel`` keeps its ``PendingNavigation``: a file in the data directory (`pending-navigation.json`, apart
/// from the store that signing out erases), or memory only for previews and tests.
public final class PendingNavigationStore: Sendable {
    private let kept: DeviceFile<PendingNavigation>

    /// The store of the file at `url`; `nil`: memory only.
    public init(file url: URL?) {
        kept = DeviceFile(url)
    }

    /// A store in memory only.
    public static func inMemory() -> PendingNavigationStore {
        PendingNavigationStore(file: nil)
    }

    /// What waits, if anything.
    public func load() -> PendingNavigation? {
        kept.load()
    }

    /// Replaces what waits (`nil`: nothing).
    public func save(_ pending: PendingNavigation?) {
        kept.save(pending)
    }
}

extension AppModel.Destination {
    /// Where a tapped push leads: a group's news to its screen or its boards, a reminder to today's workouts or the
    /// cycle calendar, anything else (a push of a kind this app does not know, one without its group) to the feed.
    public init(_ notification: FitBaseNotification) {
        switch notification {
        case .newMember(let push): self = push.groupID.map { .group($0) } ?? .notifications
        case .rankChange(let push), .weekEnded(let push): self = push.groupID.map { .leaderboard($0) } ?? .notifications
        case .workoutReminder, .reminder: self = .today
        case .periodReminder: self = .cycle
        case .other: self = .notifications
        }
    }
}
