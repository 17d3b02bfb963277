import Foundation
import Logging
import ServiceLifecycle

/// Groups, invites, weekly challenges with their leaderboards, and the notifications they send.
struct SocialFeature: ServerFeature {
    let database: Database
    let groups: GroupStore
    let membership: GroupMembership
    let configuration: SocialConfiguration
    let publicURL: String
    let notifications: NotificationStore
    let challenges: ChallengeBoards
    private let logger: Logger

    init(_ foundation: ServerFoundation) {
        let database = foundation.database
        self.database = database
        groups = GroupStore(database: database)
        membership = GroupMembership(database: database)
        configuration = foundation.configuration.social
        publicURL = foundation.configuration.publicURL
        notifications = NotificationStore(database: database)
        challenges = ChallengeBoards(database: database)
        logger = foundation.logger
    }

    var dataOwners: [any AccountDataOwner] { [GroupMembershipOwner(), NotificationsOwner()] }
    var services: [any Service] { [WeekRolloverService(rollover: WeekRollover(database: database), logger: logger)] }
}
