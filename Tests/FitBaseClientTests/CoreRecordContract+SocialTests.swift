import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import Testing

/// The social records the Kit once mirrored by hand — invitations, their previews and weekly leaderboards — are Core's,
/// with the contract's JSON both ways, and read from the generated answers through ``ContractJSON``.
@Suite struct CoreRecordContractSocialTests {
    static let instant = CoreRecordContractTests.instant

    @Test func anInvitationIsTheContractsGroupInvite() throws {
        let invitation = GroupInvitation(
            id: InviteID(), code: "k3y-t0ken", url: URL(string: "https://fitbase.example.com/group/invite/k3y-t0ken")!,
            deepLink: URL(string: "fitbase://group/invite/k3y-t0ken")!, createdAt: Self.instant, expiresAt: Self.instant + 7 * 86_400,
            maxUses: 5, useCount: 2)
        let wire = try CoreRecordContractTests.roundTrip(invitation, as: Components.Schemas.GroupInvite.self)
        #expect(wire.id == invitation.id.description && wire.token == "k3y-t0ken" && wire.url == invitation.url.absoluteString)
        #expect(wire.deepLink == "fitbase://group/invite/k3y-t0ken" && wire.maxUses == 5 && wire.useCount == 2)
        #expect(try ContractJSON.record(GroupInvitation.self, from: wire) == invitation)

        var unlimited = invitation
        unlimited.maxUses = nil
        #expect(try CoreRecordContractTests.roundTrip(unlimited, as: Components.Schemas.GroupInvite.self).maxUses == nil)
    }

    @Test func anInvitationWhoseLinkIsNotALinkIsNotUnderstood() throws {
        let wire = Components.Schemas.GroupInvite(
            id: InviteID().description, token: "t", url: "", deepLink: "fitbase://group/invite/t", createdAt: Self.instant,
            expiresAt: Self.instant, useCount: 0)
        #expect(throws: FitBaseError.unexpectedResponse(statusCode: 200)) { try ContractJSON.record(GroupInvitation.self, from: wire) }
    }

    @Test func anInvitationsDescriptionIsTheContractsGroupInviteInfo() throws {
        let info = InvitationInfo(
            id: InviteID(), createdBy: UserID(), createdAt: Self.instant, expiresAt: Self.instant + 86_400, maxUses: nil, useCount: 0)
        let wire = try CoreRecordContractTests.roundTrip(info, as: Components.Schemas.GroupInviteInfo.self)
        #expect(wire.id == info.id.description && wire.createdBy == info.createdBy.description && wire.maxUses == nil)
        #expect(try ContractJSON.record(InvitationInfo.self, from: wire) == info)
    }

    @Test func aPreviewIsTheContractsInvitePreview() throws {
        let preview = InvitationPreview(groupID: GroupID(), groupName: "Morning Movers", memberCount: 10, isFull: true)
        let wire = try CoreRecordContractTests.roundTrip(preview, as: Components.Schemas.InvitePreview.self)
        #expect(wire.groupId == preview.groupID.description && wire.groupName == "Morning Movers" && wire.memberCount == 10 && wire.isFull)
        #expect(try ContractJSON.record(InvitationPreview.self, from: wire) == preview)
    }

    @Test func aWeeklyChallengeIsTheContractsChallenge() throws {
        let challenge = Self.challenge(isActive: true)
        let wire = try CoreRecordContractTests.roundTrip(challenge, as: Components.Schemas.Challenge.self)
        #expect(wire.id == challenge.id.description && wire.groupId == challenge.group.description && wire._type == .streak)
        #expect(wire.weekStart == "2027-01-11" && wire.startsAt == challenge.startsAt && wire.endsAt == challenge.endsAt && wire.isActive)
    }

    @Test func aLeaderboardIsTheContractsLeaderboard() throws {
        let ana = LeaderboardEntry(user: UserID(), displayName: "Ana", value: 4, rank: 1, reachedAt: Self.instant)
        let bea = LeaderboardEntry(
            user: UserID(), displayName: "Member 2", photoURL: "https://example.com/b.png", value: 2, rank: 2, reachedAt: Self.instant)
        let board = GroupLeaderboard(challenge: Self.challenge(isActive: false), rows: [ana, bea], currentUser: bea)
        let wire = try CoreRecordContractTests.roundTrip(board, as: Components.Schemas.Leaderboard.self)
        #expect(wire.entries.map(\.userId) == [ana.user.description, bea.user.description])
        #expect(wire.currentUserEntry?.userId == bea.user.description && wire.challenge._type == .streak)

        // What the SDK's facade answers reads as the same board, with the screen's view of it.
        let read = try ContractJSON.record(GroupLeaderboard.self, from: wire)
        #expect(read == board && read.type == .streak && read.weekStart == CalendarDay("2027-01-11") && read.isFinal)
        #expect(read.endsAt == board.challenge.endsAt)

        let unscored = GroupLeaderboard(challenge: Self.challenge(isActive: true), rows: [], currentUser: nil)
        let empty = try CoreRecordContractTests.roundTrip(unscored, as: Components.Schemas.Leaderboard.self)
        let emptyRecord = try ContractJSON.record(GroupLeaderboard.self, from: empty)
        #expect(empty.currentUserEntry == nil && empty.entries.isEmpty && !emptyRecord.isFinal)
    }

    static func challenge(isActive: Bool) -> WeeklyChallenge {
        let monday = CalendarDay("2027-01-11")!
        return WeeklyChallenge(
            id: ChallengeID(), group: GroupID(), type: .streak, weekStart: monday, startsAt: monday.start(in: .gmt),
            endsAt: monday.adding(days: 7).start(in: .gmt) - 1, isActive: isActive)
    }
}
