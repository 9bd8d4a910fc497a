;;; agent-ls.el --- Eglot setup for the agent-ls language server  -*- lexical-binding: t; -*-

;; Keywords: languages, tools
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))

;;; Commentary:

;; Starts `agent-ls serve' through Eglot for agent files (*.agent.yaml,
;; *.agent.yml, *.agent.json) and the workspace config (.agent-ls.yaml,
;; completed and checked against its own schema), which get their own major
;; modes derived from the YAML/JSON modes available.  The protocol contract is
;; docs/LSP-PROTOCOL.md.
;;
;;   (add-to-list 'load-path "/path/to/agent-ls/editors/emacs")
;;   (require 'agent-ls)
;;   (setq agent-ls-store-path ".agent-memory/memory.db"
;;         agent-ls-actor "human:me")
;;   (add-hook 'agent-ls-yaml-mode-hook #'eglot-ensure)
;;   (add-hook 'agent-ls-json-mode-hook #'eglot-ensure)

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)

(defgroup agent-ls nil
  "The agent-ls language server for LLM agent files."
  :group 'tools
  :prefix "agent-ls-")

(defcustom agent-ls-server-command '("agent-ls" "serve")
  "Command line that starts the server on stdio."
  :type '(repeat string))

(defcustom agent-ls-store-path nil
  "The bbolt memory store, relative to the workspace root.
Sent as initializationOptions.storePath; nil leaves it to .agent-ls.yaml."
  :type '(choice (const :tag "From .agent-ls.yaml" nil) string))

(defcustom agent-ls-scope nil
  "Base scope as an alist of (KEY . VALUE) strings (initializationOptions.scope)."
  :type '(alist :key-type string :value-type string))

(defcustom agent-ls-actor nil
  "Who code actions and approvals act as, \"human:NAME\".
Sent as initializationOptions.actor; nil leaves it to .agent-ls.yaml
or human:$USER."
  :type '(choice (const :tag "Default" nil) string))

(defcustom agent-ls-budgets nil
  "Per-primitive character budgets as an alist of (PRIMITIVE . CHARS).
Sent as initializationOptions.budgets."
  :type '(alist :key-type string :value-type integer))

(defcustom agent-ls-root-markers '(".agent-ls.yaml")
  "Files that mark an agent workspace root; tried before the VC root."
  :type '(repeat string))

(defun agent-ls--alist-to-object (alist)
  "Turn ALIST of (KEY . VALUE) into a hash table that encodes as a JSON object."
  (let ((h (make-hash-table :test #'equal)))
    (dolist (kv alist h)
      (puthash (format "%s" (car kv)) (cdr kv) h))))

(defun agent-ls-initialization-options ()
  "The initializationOptions object built from the customizations.
Unset customizations are left out so .agent-ls.yaml fills them."
  (let ((h (make-hash-table :test #'equal)))
    (when (and agent-ls-store-path (not (string-empty-p agent-ls-store-path)))
      (puthash "storePath" agent-ls-store-path h))
    (when agent-ls-scope
      (puthash "scope" (agent-ls--alist-to-object agent-ls-scope) h))
    (when (and agent-ls-actor (not (string-empty-p agent-ls-actor)))
      (puthash "actor" agent-ls-actor h))
    (when agent-ls-budgets
      (puthash "budgets" (agent-ls--alist-to-object agent-ls-budgets) h))
    h))

(defun agent-ls--contact (&optional _interactive)
  "Eglot contact: the server command with the initialization options."
  (append agent-ls-server-command
          (list :initializationOptions (agent-ls-initialization-options))))

;;;; Major modes

(defalias 'agent-ls--yaml-base-mode
  (cond ((fboundp 'yaml-ts-mode) 'yaml-ts-mode)
        ((fboundp 'yaml-mode) 'yaml-mode)
        (t 'prog-mode))
  "The mode agent YAML files derive from.")

(defalias 'agent-ls--json-base-mode
  (cond ((fboundp 'json-ts-mode) 'json-ts-mode)
        ((fboundp 'js-json-mode) 'js-json-mode)
        (t 'js-mode))
  "The mode agent JSON files derive from.")

;;;###autoload
(define-derived-mode agent-ls-yaml-mode agent-ls--yaml-base-mode "Agent-YAML"
  "Major mode for agent files in YAML (*.agent.yaml, *.agent.yml).
Also the workspace config .agent-ls.yaml, which the server serves from its
own schema."
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+\\s-*"))

;;;###autoload
(define-derived-mode agent-ls-json-mode agent-ls--json-base-mode "Agent-JSON"
  "Major mode for agent files in JSON (*.agent.json).")

(put 'agent-ls-yaml-mode 'eglot-language-id "yaml")
(put 'agent-ls-json-mode 'eglot-language-id "json")

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.agent\\.ya?ml\\'" . agent-ls-yaml-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("\\.agent\\.json\\'" . agent-ls-json-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("/\\.agent-ls\\.yaml\\'" . agent-ls-yaml-mode))

(add-to-list 'eglot-server-programs
             '(((agent-ls-yaml-mode :language-id "yaml")
                (agent-ls-json-mode :language-id "json"))
               . agent-ls--contact))

;;;; Project root

(defun agent-ls--project (dir)
  "A transient project at the nearest directory above DIR with a root marker.
The markers are `agent-ls-root-markers'.  Only for agent-file buffers, so
other projects are left alone."
  (when (derived-mode-p 'agent-ls-yaml-mode 'agent-ls-json-mode)
    (when-let ((root (cl-some (lambda (m) (locate-dominating-file dir m)) agent-ls-root-markers)))
      (cons 'transient (expand-file-name root)))))

(add-hook 'project-find-functions #'agent-ls--project)

;;;; Store status

(defvar agent-ls-status nil
  "The latest agent-ls/status notification as a plist.
Keys: :store :storePath :pendingReviews :message.")

(defvar agent-ls-status-hook nil
  "Run after each agent-ls/status notification.")

(defun agent-ls-status-string ()
  "A mode-line string for the store state and pending reviews."
  (when agent-ls-status
    (let ((store (plist-get agent-ls-status :store))
          (n (or (plist-get agent-ls-status :pendingReviews) 0)))
      (concat " agent-ls:" store (if (> n 0) (format " %d review%s" n (if (= n 1) "" "s")) "")))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql agent-ls/status)) &rest params &key store storePath message &allow-other-keys)
  "Record an agent-ls/status notification PARAMS; warn when STORE is not connected."
  (let ((prev (plist-get agent-ls-status :store)))
    (setq agent-ls-status params)
    (when (and (not (equal store "connected")) (not (equal prev store)))
      (message "agent-ls: store %s: %s%s" store storePath (if message (format " (%s)" message) "")))
    (run-hooks 'agent-ls-status-hook)
    (force-mode-line-update t)))

(add-to-list 'mode-line-misc-info '(:eval (and (derived-mode-p 'agent-ls-yaml-mode 'agent-ls-json-mode)
                                               (agent-ls-status-string))))

;;;; Commands

(defun agent-ls--request (method params)
  "Send METHOD with PARAMS to the current buffer's server and return the result."
  (jsonrpc-request (eglot--current-server-or-lose) method params))

(defun agent-ls--uri ()
  "The URI of the current buffer's file."
  (eglot--path-to-uri (or buffer-file-name (user-error "Buffer has no file"))))

(defun agent-ls--lines (text)
  "Split TEXT into lines without a trailing empty one."
  (let ((s (replace-regexp-in-string "\n+\\'" "" (replace-regexp-in-string "\r\n?" "\n" (or text "")))))
    (if (string-empty-p s) nil (split-string s "\n"))))

(defun agent-ls-render-prompt (result label)
  "Render a composedPrompt RESULT (a plist) as markdown for LABEL.
Memory-derived lines read \"> [memory ID, ...] text\"."
  (let ((sections (append (plist-get result :sections) nil))
        (out (list (format "<!-- agent-ls composed prompt of %s%s; read-only -->" label
                           (if (plist-get result :at) (concat " at " (plist-get result :at)) "")))))
    (if (null sections)
        (setq out (append out (agent-ls--lines (let ((md (plist-get result :markdown)))
                                                 (if (and md (not (string-empty-p md))) md (plist-get result :text))))))
      (dolist (s sections)
        ;; The server's fragments usually carry the section's own heading;
        ;; add one only when they do not.
        (let* ((frags (append (plist-get s :fragments) nil))
               (first (car frags))
               (headed (and first (not (equal (plist-get first :source) "memory"))
                            (string-prefix-p "#" (string-trim-left (or (plist-get first :text) ""))))))
          (setq out (append out (if headed (list "") (list "" (concat "## " (plist-get s :title))))))
          (dolist (f frags)
            (let ((fl (agent-ls--lines (plist-get f :text))))
              (when (and fl (string-prefix-p "#" (car fl)) (not (equal (car (last out)) "")))
                (setq out (append out (list ""))))
              (if (equal (plist-get f :source) "memory")
                  (let* ((ids (append (plist-get f :memoryIds) nil))
                         (mark (concat "> [memory" (if ids (concat " " (string-join ids ", ")) "") "]")))
                    (dolist (l fl)
                      (setq out (append out (list (if (string-empty-p l) mark (concat mark " " l)))))))
                (setq out (append out fl))))))))
    (concat (string-join out "\n") "\n")))

(defun agent-ls--show (name text &optional mode)
  "Show TEXT in a read-only buffer NAME in MODE; return the buffer."
  (let ((buf (get-buffer-create name)))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert text))
      (if (and mode (fboundp mode)) (funcall mode) (special-mode))
      (setq buffer-read-only t)
      (goto-char (point-min)))
    (display-buffer buf)
    buf))

(defun agent-ls-show-composed-prompt ()
  "Show the composed prompt of the current agent file; return its buffer."
  (interactive)
  (let* ((label (file-name-nondirectory buffer-file-name))
         (res (agent-ls--request :agent-ls/composedPrompt (list :uri (agent-ls--uri)))))
    (agent-ls--show (format "*agent-ls prompt: %s*" label) (agent-ls-render-prompt res label)
                    (and (fboundp 'markdown-mode) 'markdown-mode))))

(defun agent-ls-show-learnings (since)
  "Show what was promoted or demoted SINCE a duration (7d, 36h) or RFC 3339 time."
  (interactive (list (read-string "Learnings since (7d, 36h, RFC 3339): " nil nil "7d")))
  (let* ((res (agent-ls--request :agent-ls/learnings (list :uri (agent-ls--uri) :since since)))
         (ls (append (plist-get res :learnings) nil))
         (lines (list (format "# Learnings since %s" since) "")))
    (dolist (l ls)
      (let ((target (plist-get l :target)))
        (setq lines (append lines (list (format "- %s %s (%s) %s  [%s · %s · %s]"
                                                (plist-get l :op)
                                                (if (stringp target) target (plist-get target :primitive))
                                                (plist-get l :tier) (plist-get l :content)
                                                (plist-get l :at) (plist-get l :actor) (plist-get l :recordId)))))))
    (unless ls (setq lines (append lines '("_Nothing was promoted or demoted in this period._"))))
    (agent-ls--show "*agent-ls learnings*" (concat (string-join lines "\n") "\n"))))

(defun agent-ls-execute (command args)
  "Run server COMMAND with the ARGS plist; return the server's message.
It goes through workspace/executeCommand."
  (let ((res (agent-ls--request :workspace/executeCommand
                                (list :command command :arguments (vector args)))))
    (or (plist-get res :message) (format "%s done" command))))

(defun agent-ls-review ()
  "Pick a pending proposal, show its diff, then approve or reject it."
  (interactive)
  (let* ((uri (agent-ls--uri))
         (res (agent-ls--request :agent-ls/proposals (list :uri uri)))
         (ps (append (plist-get res :proposals) nil)))
    (if (null ps)
        (message "agent-ls: no pending reviews")
      (let* ((choices (mapcar (lambda (p)
                                (cons (format "%s %s (%s) by %s: %s" (plist-get p :kind) (plist-get p :recordId)
                                              (plist-get p :tier) (plist-get p :requestedBy) (plist-get p :content))
                                      p))
                              ps))
             (p (cdr (assoc (completing-read "Pending review: " choices nil t) choices))))
        (agent-ls--show (format "*agent-ls proposal %s*" (plist-get p :id)) (plist-get p :diff)
                        (and (fboundp 'diff-mode) 'diff-mode))
        (pcase (completing-read "Decision: " '("approve" "reject" "later") nil t)
          ("approve" (message "agent-ls: %s" (agent-ls-execute "agent-ls.approve" (list :proposalId (plist-get p :id) :uri uri))))
          ("reject" (let ((reason (string-trim (read-string "Reason: "))))
                      (when (string-empty-p reason) (user-error "A reason is required"))
                      (message "agent-ls: %s"
                               (agent-ls-execute "agent-ls.reject"
                                                 (list :proposalId (plist-get p :id) :reason reason :uri uri))))))))))

(provide 'agent-ls)
;;; agent-ls.el ends here
