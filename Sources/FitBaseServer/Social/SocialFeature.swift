import Foundation
import Logging
import ServiceLifecycle

/// Groups, invites, weekly challenges with their leaderboards, and the notifications they send.
struct SocialFeature: ServerFeature {
    let database: Database
    let groups: GroupStore
    let configuration: SocialConfiguration
    let publicURL: String
    private let logger: Logger

    var membership: GroupMembership { GroupMembership(database: database) }
    var notifications: NotificationStore { NotificationStore(database: database) }
    var challenges: ChallengeBoards { ChallengeBoards(database: database) }

    init(_ foundation: ServerFoundation) {
        let database = foundation.database
        self.database = database
        groups = GroupStore(database: database)
        configuration = foundation.configuration.social
        publicURL = foundation.configuration.publicURL
        logger = foundation.logger
    }

    var dataOwners: [any AccountDataOwner] { [GroupMembershipOwner(), NotificationsOwner()] }
    var services: [any Service] { [WeekRolloverService(rollover: WeekRollover(database: database), logger: logger)] }
}
