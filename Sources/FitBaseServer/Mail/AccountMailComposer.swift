import Foundation
import Mustache

/// Renders the account e-mails (plain text and HTML, from the templates in `Templates/mail`) and the small pages the
/// e-mailed links open (`Templates/page-*`), with the app's name (`FITBASE_APP_NAME`) and links on the public URL.
///
/// E-mails carry no text a user wrote (no display name in the greeting): anyone may sign up with someone else's
/// address, and whatever they typed would reach that inbox from the operator's domain.
struct AccountMailComposer: Sendable {
    let appName: String
    let publicURL: String
    private let library: MustacheLibrary

    /// Loads the bundled templates; a broken template stops start-up.
    static func load(appName: String, publicURL: String) async throws -> AccountMailComposer {
        guard let directory = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw TemplateError(name: "Templates", reason: "the resource folder is missing from the build")
        }
        return AccountMailComposer(appName: appName, publicURL: publicURL, library: try await MustacheLibrary(directory: directory.path))
    }

    /// The link a verification or e-mail change token opens.
    func verificationLink(_ token: String) -> String { "\(publicURL)/auth/verify?token=\(token)" }
    /// The link a password-reset token opens.
    func resetLink(_ token: String) -> String { "\(publicURL)/auth/reset?token=\(token)" }

    func verification(to email: String, token: String) throws -> MailMessage {
        try message("verify-email", to: email, subject: "Confirm your e-mail address for \(appName)", [
            "email": email, "link": verificationLink(token),
        ])
    }

    func passwordReset(to email: String, token: String) throws -> MailMessage {
        try message("reset-password", to: email, subject: "Reset your \(appName) password", [
            "email": email, "link": resetLink(token),
        ])
    }

    func emailChange(to newEmail: String, token: String) throws -> MailMessage {
        try message("change-email", to: newEmail, subject: "Confirm your new \(appName) e-mail address", [
            "newEmail": newEmail, "link": verificationLink(token),
        ])
    }

    func emailChanged(to oldEmail: String, newEmail: String) throws -> MailMessage {
        try message("email-changed", to: oldEmail, subject: "Your \(appName) e-mail address was changed", [
            "oldEmail": oldEmail, "newEmail": newEmail,
        ])
    }

    func passwordChanged(to email: String, resetByLink: Bool) throws -> MailMessage {
        try message("password-changed", to: email, subject: "Your \(appName) password was changed", [
            "email": email, "resetByLink": resetByLink,
        ])
    }

    /// Tells the address that a provider sign-in joined the account it belongs to (and removed its password, if it
    /// had one).
    func providerJoined(to email: String, provider: String, passwordRemoved: Bool) throws -> MailMessage {
        try message("provider-joined", to: email, subject: "\(provider) sign-in was added to your \(appName) account", [
            "email": email, "provider": provider, "passwordRemoved": passwordRemoved,
        ])
    }

    /// Tells the address that a provider sign-in replaced an account registered with it and a password but never
    /// confirmed: that account, and everything set up in it, was deleted.
    func unconfirmedAccountReplaced(to email: String, provider: String) throws -> MailMessage {
        try message("unconfirmed-account-replaced", to: email, subject: "Your \(appName) account now signs in with \(provider)", [
            "email": email, "provider": provider,
        ])
    }

    /// Tells the address that someone tried to sign up with it, though it has an account (the sign-up's answer does
    /// not say so: this e-mail does, to the mailbox's owner only).
    func signUpAttempt(to email: String) throws -> MailMessage {
        try message("sign-up-attempt", to: email, subject: "Someone tried to create a \(appName) account with your address", [
            "email": email,
        ])
    }

    /// A page of `Templates/page-*` (HTML-escaped values).
    func page(_ name: String, _ values: [String: Any]) throws -> String {
        try render("page-\(name).html", values.merging(["appName": appName]) { current, _ in current })
    }

    private func message(_ template: String, to: String, subject: String, _ given: [String: Any?]) throws -> MailMessage {
        var values = given.compactMapValues { $0 }
        values["appName"] = appName
        values["subject"] = subject
        return MailMessage(
            to: to, subject: subject, text: try render("mail-\(template).text", values), html: try render("mail-\(template).html", values)
        )
    }

    private func render(_ template: String, _ values: [String: Any]) throws -> String {
        guard let text = library.render(values, withTemplate: template) else {
            throw TemplateError(name: template, reason: "no such template")
        }
        return text
    }
}

/// A template that cannot be used.
struct TemplateError: Error, CustomStringConvertible {
    let name: String
    let reason: String
    var description: String { "template \(name): \(reason)" }
}
