import Foundation
import Logging
import ServiceLifecycle

/// Groups, invites, weekly challenges with their leaderboards, and the notifications they send.
struct SocialFeature: ServerFeature {
    let database: Database
    let configuration: SocialConfiguration
    let publicURL: String
    let clock: ServerClock
    /// Renders the invite page (with the account pages' layout).
    let composer: AccountMailComposer
    private let logger: Logger

    var groups: GroupStore { GroupStore(database: database) }
    var membership: GroupMembership { GroupMembership(database: database) }
    var notifications: NotificationStore { NotificationStore(database: database) }
    var challenges: ChallengeBoards { ChallengeBoards(database: database, clock: clock) }

    init(_ foundation: ServerFoundation) {
        let database = foundation.database
        self.database = database
        configuration = foundation.configuration.social
        publicURL = foundation.configuration.publicURL
        clock = foundation.clock
        composer = foundation.composer
        logger = foundation.logger
    }

    var dataOwners: [any AccountDataOwner] { [GroupMembershipOwner(), NotificationsOwner()] }
    var middleware: [ScopedMiddleware] { [PageHeadersMiddleware.scoped(under: "/group/invite/")] }
    var services: [any Service] { [PeriodicService.weekRollover(WeekRollover(database: database), clock: clock, logger: logger)] }
}
