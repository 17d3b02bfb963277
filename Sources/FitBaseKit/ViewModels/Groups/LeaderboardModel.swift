import FitBaseClient
import FitBaseCore
import Foundation
import Observation

/// A group's live leaderboard (seed 004): follows the service's stream while the screen shows (``appear()`` …
/// ``disappear()``), and marks the rows whose rank changed with the last update.
@MainActor @Observable
public final class LeaderboardModel {
    /// How a member's rank moved with the last update.
    public enum RankChange: Sendable, Equatable {
        /// Up this many places.
        case up(Int)
        /// Down this many places.
        case down(Int)
        /// Not on the previous board.
        case new
    }

    /// The group.
    public let groupID: GroupID
    /// The challenge showing.
    public private(set) var type: LeaderboardType
    /// The board (`nil` until the first arrives).
    public private(set) var board: GroupLeaderboard?
    /// The rows whose rank changed with the last update, by user id (highlight them).
    public private(set) var rankChanges: [UserID: RankChange] = [:]
    /// The stream is running.
    public private(set) var isLive = false
    /// The past week showing (its Monday); `nil`: this week, live.
    public private(set) var pastWeek: CalendarDay?
    public private(set) var error: ScreenError?

    private let groups: any GroupService
    private let analytics: any AnalyticsService
    @ObservationIgnored private var streamTask: Task<Void, Never>?

    /// A leaderboard of `groupID`'s `type` challenge over the services of `dependencies`.
    public init(groupID: GroupID, type: LeaderboardType = .checkIns, dependencies: FitBaseDependencies) {
        self.groupID = groupID
        self.type = type
        groups = dependencies.groups
        analytics = dependencies.analytics
    }

    /// The rows, best first.
    public var rows: [LeaderboardEntry] { board?.rows ?? [] }
    /// The user's own row.
    public var currentUser: LeaderboardEntry? { board?.currentUser }
    /// The board arrived, and nobody has scored yet.
    public var isEmpty: Bool { board.map { board in board.rows.allSatisfy { $0.value == 0 } } ?? false }

    /// Starts following the board (the screen appeared).
    public func appear() {
        streamTask?.cancel()
        error = nil
        isLive = true
        let updates = groups.liveLeaderboard(groupID: groupID, type: type)
        streamTask = Task { [weak self] in
            for await update in updates {
                guard let self, !Task.isCancelled else { return }
                self.apply(update)
            }
            if !Task.isCancelled { self?.isLive = false }
        }
    }

    /// Stops following the board (the screen went away).
    public func disappear() {
        streamTask?.cancel()
        streamTask = nil
        isLive = false
    }

    /// Switches the challenge showing and follows its board (or shows it for the past week showing).
    public func select(_ type: LeaderboardType) async {
        guard type != self.type else { return }
        self.type = type
        board = nil
        rankChanges = [:]
        if let pastWeek {
            await showWeek(of: pastWeek)
        } else if streamTask != nil {
            appear()
        }
    }

    /// Shows the final board of the week holding `day` (weeks are kept 90 days; a week without a challenge shows no
    /// board). The live stream stops; ``showThisWeek()`` follows it again.
    public func showWeek(of day: CalendarDay) async {
        disappear()
        rankChanges = [:]
        do throws(KitError) {
            let boards = try await groups.leaderboards(groupID: groupID, week: day)
            pastWeek = WorkoutStreaks.weekStart(of: day)
            board = boards.first { $0.type == type }
            error = nil
        } catch {
            guard !error.isCancellation else { return }
            self.error = ScreenError(error)
            analytics.track(.operationFailed(feature: .groups, reason: error.kind))
        }
    }

    /// Shows the week before the one showing.
    public func showPreviousWeek() async {
        guard let start = pastWeek ?? board?.weekStart else { return }
        await showWeek(of: start.adding(days: -7))
    }

    /// Back to this week's live board.
    public func showThisWeek() {
        pastWeek = nil
        board = nil
        appear()
    }

    /// Waits until the stream ends (tests, and a journey that reads the board after it ended).
    public func waitUntilEnded() async {
        await streamTask?.value
    }

    private func apply(_ update: LeaderboardUpdate) {
        switch update {
        case .board(let new):
            if let previous = board, previous.type == new.type {
                rankChanges = Self.changes(from: previous.rows, to: new.rows)
            } else {
                rankChanges = [:]
            }
            board = new
            error = nil
        case .ended(let failure):
            isLive = false
            if !failure.isCancellation {
                error = ScreenError(failure)
                analytics.track(.operationFailed(feature: .groups, reason: failure.kind))
            }
        }
    }

    /// How each member's rank moved from board `old` to board `new` (members whose rank held are left out).
    public static func changes(from old: [LeaderboardEntry], to new: [LeaderboardEntry]) -> [UserID: RankChange] {
        let before = Dictionary(old.map { ($0.user, $0.rank) }, uniquingKeysWith: { first, _ in first })
        var changes: [UserID: RankChange] = [:]
        for row in new {
            guard let previous = before[row.user] else {
                changes[row.user] = .new
                continue
            }
            if row.rank < previous { changes[row.user] = .up(previous - row.rank) }
            if row.rank > previous { changes[row.user] = .down(row.rank - previous) }
        }
        return changes
    }
}
