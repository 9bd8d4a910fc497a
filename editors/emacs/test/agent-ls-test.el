;;; agent-ls-test.el --- Headless test of agent-ls.el with Eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Drives agent-ls.el through Eglot against the stand-in server
;; editors/test/fake-server.js.  Run by editors/test.sh:
;;   FAKE_SERVER=... WORKDIR=... emacs --batch -L editors/emacs \
;;     -l editors/emacs/test/agent-ls-test.el -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'agent-ls)

(defvar agent-ls-test--work (or (getenv "WORKDIR") (error "WORKDIR is not set")))
(defvar agent-ls-test--log (expand-file-name "emacs-server.log" agent-ls-test--work))
(defvar agent-ls-test--ws (file-name-as-directory (expand-file-name "emacs-ws" agent-ls-test--work)))

(defun agent-ls-test--write (rel text)
  "Write TEXT to REL under the test workspace."
  (let ((f (expand-file-name rel agent-ls-test--ws)))
    (make-directory (file-name-directory f) t)
    (with-temp-file f (insert text))
    f))

(defun agent-ls-test--messages ()
  "The messages the server logged, as plists."
  (when (file-exists-p agent-ls-test--log)
    (with-temp-buffer
      (insert-file-contents agent-ls-test--log)
      (mapcar (lambda (l) (json-parse-string l :object-type 'plist :array-type 'list :null-object nil))
              (split-string (buffer-string) "\n" t)))))

(defun agent-ls-test--wait (pred &optional secs)
  "Wait up to SECS (5) seconds for PRED to return non-nil; return its value."
  (let ((deadline (+ (float-time) (or secs 5))) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    v))

(defun agent-ls-test--find (method &optional pred)
  "Wait for a logged message of METHOD satisfying PRED."
  (agent-ls-test--wait
   (lambda ()
     (cl-find-if (lambda (m) (and (equal (plist-get m :method) method) (or (null pred) (funcall pred m))))
                 (agent-ls-test--messages)))))

(defun agent-ls-test--connect ()
  "Start Eglot for the current buffer as `eglot-ensure' would after a command."
  (eglot-ensure)
  (run-hooks 'post-command-hook)
  (agent-ls-test--wait #'eglot-current-server))

(ert-deftest agent-ls-initialization-options ()
  (let ((agent-ls-store-path nil) (agent-ls-scope nil) (agent-ls-actor nil) (agent-ls-budgets nil))
    (should (equal (json-encode (agent-ls-initialization-options)) "{}")))
  (let ((agent-ls-store-path "m.db") (agent-ls-scope '(("tenant" . "acme")))
        (agent-ls-actor "human:alice") (agent-ls-budgets '((background . 400))))
    (should (equal (json-parse-string (json-encode (agent-ls-initialization-options)) :object-type 'alist)
                   '((storePath . "m.db") (scope (tenant . "acme")) (actor . "human:alice")
                     (budgets (background . 400)))))))

(ert-deftest agent-ls-render-prompt-marks-memory ()
  (let ((md (agent-ls-render-prompt
             '(:text "" :markdown ""
               :sections [(:title "Background" :source "role"
                           :fragments [(:source "role" :text "You handle refunds.")
                                       (:source "memory" :text "a\n\nb" :memoryIds ["r1" "r2"])])])
             "x.agent.yaml")))
    (should (string-match-p "^## Background$" md))
    (should (string-match-p "^You handle refunds\\.$" md))
    (should (string-match-p "^> \\[memory r1, r2\\] a\n> \\[memory r1, r2\\]\n> \\[memory r1, r2\\] b$" md))))

(ert-deftest agent-ls-render-prompt-keeps-server-headings ()
  (should (equal (agent-ls-render-prompt
                  '(:text "" :markdown ""
                    :sections [(:title "Identity" :source "role"
                                :fragments [(:source "role" :text "## Identity")
                                            (:source "role" :text "You are precise.")
                                            (:source "role" :text "### Tone")
                                            (:source "memory" :text "Be brief." :memoryIds ["m1"])])
                               (:title "Boundaries" :source "role"
                                :fragments [(:source "role" :text "## Boundaries")])])
                  "s.agent.yaml")
                 (concat "<!-- agent-ls composed prompt of s.agent.yaml; read-only -->\n"
                         "\n## Identity\nYou are precise.\n\n### Tone\n> [memory m1] Be brief.\n"
                         "\n## Boundaries\n"))))

(ert-deftest agent-ls-modes ()
  (dolist (c '(("a.agent.yaml" . agent-ls-yaml-mode) ("a.agent.yml" . agent-ls-yaml-mode)
               ("a.agent.json" . agent-ls-json-mode) (".agent-ls.yaml" . agent-ls-yaml-mode)))
    (with-temp-buffer
      (setq buffer-file-name (expand-file-name (car c) temporary-file-directory))
      (set-auto-mode)
      (should (eq major-mode (cdr c)))
      (setq buffer-file-name nil)))
  (with-temp-buffer
    (setq buffer-file-name (expand-file-name "agent.yaml" temporary-file-directory))
    (set-auto-mode)
    (should-not (derived-mode-p 'agent-ls-yaml-mode))
    (setq buffer-file-name nil)))

(ert-deftest agent-ls-eglot-end-to-end ()
  (setenv "FAKE_LSP_LOG" agent-ls-test--log)
  (when (file-exists-p agent-ls-test--log) (delete-file agent-ls-test--log))
  (agent-ls-test--write ".agent-ls.yaml" "store: mem.db\n")
  (let* ((a (agent-ls-test--write "agents/a.agent.yaml" "roleTemplate:\n  name: refunds\n"))
         (b (agent-ls-test--write "agents/b.agent.json" "{\"roleTemplate\": {\"name\": \"refunds\"}}\n"))
         (agent-ls-server-command (list "node" (or (getenv "FAKE_SERVER") (error "FAKE_SERVER is not set"))))
         (agent-ls-store-path "mem.db")
         (agent-ls-scope '(("tenant" . "acme")))
         (agent-ls-actor "human:alice")
         (eglot-sync-connect t)
         server)
    (with-current-buffer (find-file-noselect a)
      (should (eq major-mode 'agent-ls-yaml-mode))
      (setq server (agent-ls-test--connect))
      (should server)
      (let* ((init (agent-ls-test--find "initialize"))
             (opts (plist-get (plist-get init :params) :initializationOptions)))
        (should init)
        (should (equal (plist-get opts :storePath) "mem.db"))
        (should (equal (plist-get opts :actor) "human:alice"))
        (should (equal (plist-get (plist-get opts :scope) :tenant) "acme"))
        (should (equal (directory-file-name (eglot--uri-to-path (plist-get (plist-get init :params) :rootUri)))
                       (directory-file-name agent-ls-test--ws))))
      (let ((open (agent-ls-test--find "textDocument/didOpen")))
        (should (equal (plist-get (plist-get (plist-get open :params) :textDocument) :languageId) "yaml")))
      (should (agent-ls-test--wait (lambda () (equal (plist-get agent-ls-status :store) "locked"))))
      (should (equal (plist-get agent-ls-status :pendingReviews) 1))
      (should (equal (agent-ls-status-string) " agent-ls:locked 1 review"))
      ;; Composed prompt in a read-only buffer with memory lines marked.
      (let ((buf (agent-ls-show-composed-prompt)))
        (with-current-buffer buf
          (should buffer-read-only)
          (should (string-match-p "^> \\[memory 01JREC\\] Deploys freeze on Fridays\\.$" (buffer-string)))))
      ;; Review: pick the only proposal and approve it.
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt choices &rest _)
                   (if (string-prefix-p "Decision" prompt) "approve" (car (car choices))))))
        (agent-ls-review))
      (let ((exec (agent-ls-test--find "workspace/executeCommand")))
        (should (equal (plist-get (plist-get exec :params) :command) "agent-ls.approve"))
        (should (equal (plist-get (car (plist-get (plist-get exec :params) :arguments)) :proposalId) "p1"))
        (should (equal (plist-get (car (plist-get (plist-get exec :params) :arguments)) :uri) (agent-ls--uri)))))
    ;; The JSON agent file of the same workspace joins the same server.  Eglot
    ;; 1.9 sends one language id per server (the first mode's); later Eglots
    ;; keep a per-mode table (the `languages' slot) and must send json.
    (with-current-buffer (find-file-noselect b)
      (should (eq major-mode 'agent-ls-json-mode))
      (should (eq (agent-ls-test--connect) server))
      (let ((open (agent-ls-test--find "textDocument/didOpen"
                                       (lambda (m) (string-suffix-p "b.agent.json"
                                                                    (plist-get (plist-get (plist-get m :params) :textDocument)
                                                                               :uri))))))
        (should open)
        (when (slot-exists-p server 'languages)
          (should (equal (plist-get (plist-get (plist-get open :params) :textDocument) :languageId) "json")))))
    (eglot-shutdown server)
    (should (agent-ls-test--find "shutdown"))))

;;; agent-ls-test.el ends here
