import Foundation
import Mustache

/// Renders the account e-mails (plain text and HTML, from the templates in `Templates/mail`) and the small pages the
/// e-mailed links open (`Templates/page-*`), with the app's name (`FITBASE_APP_NAME`) and links on the public URL.
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

    func verification(to email: String, name: String?, token: String) throws -> MailMessage {
        try message("verify-email", to: email, subject: "Confirm your e-mail address for \(appName)", [
            "name": name, "email": email, "link": verificationLink(token),
        ])
    }

    func passwordReset(to email: String, name: String?, token: String) throws -> MailMessage {
        try message("reset-password", to: email, subject: "Reset your \(appName) password", [
            "name": name, "email": email, "link": resetLink(token),
        ])
    }

    func emailChange(to newEmail: String, name: String?, token: String) throws -> MailMessage {
        try message("change-email", to: newEmail, subject: "Confirm your new \(appName) e-mail address", [
            "name": name, "newEmail": newEmail, "link": verificationLink(token),
        ])
    }

    func emailChanged(to oldEmail: String, name: String?, newEmail: String) throws -> MailMessage {
        try message("email-changed", to: oldEmail, subject: "Your \(appName) e-mail address was changed", [
            "name": name, "oldEmail": oldEmail, "newEmail": newEmail,
        ])
    }

    func passwordChanged(to email: String, name: String?, resetByLink: Bool) throws -> MailMessage {
        try message("password-changed", to: email, subject: "Your \(appName) password was changed", [
            "name": name, "email": email, "resetByLink": resetByLink,
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
