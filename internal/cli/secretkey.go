package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service/secrets"
)

// secretKeyCommand makes the operator's secret key, which seals the API keys tenants
// store for judge endpoints, and rotates it.
func (e *env) secretKeyCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "secret-key", Short: "Make or rotate the secret key that seals tenants' judge API keys", Args: cobra.NoArgs}
	newKey := &cobra.Command{
		Use:   "new",
		Short: "Print a new random secret key (base64 of 32 bytes) for " + EnvSecretKey,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(e.stdout, secrets.NewKey())
			fmt.Fprintf(e.stderr, "scorekit: keep it where serve and worker read it, as $%s; losing it loses the tenants' stored keys (they store them again).\n", EnvSecretKey)
			return nil
		},
	}
	var db string
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Seal every stored tenant key again under $" + EnvSecretKey + ", opening them with $" + EnvSecretKeyOld,
		Long: "Rotating the operator's secret key: make a new one (scorekit secret-key new), restart serve and every worker with " +
			"the new key in $" + EnvSecretKey + " and the old one in $" + EnvSecretKeyOld + " (both open stored keys; new ones are sealed " +
			"under the new key), run this command once with the same two variables, then drop $" + EnvSecretKeyOld + " and restart.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				n, problems, err := s.svc.RotateSecrets(cmd.Context())
				if err != nil {
					return err
				}
				for _, p := range problems {
					fmt.Fprintf(e.stderr, "scorekit: cannot reseal: %s\n", p)
				}
				fmt.Fprintf(e.stdout, "%d tenant key(s) sealed again under the current secret key; %d could not be opened\n", n, len(problems))
				if len(problems) > 0 {
					return fmt.Errorf("secret-key rotate: %d key(s) could not be opened: give the key that sealed them in $%s, or have those tenants store their keys again", len(problems), EnvSecretKeyOld)
				}
				return nil
			})
		},
	}
	rotate.Flags().StringVar(&db, "db", defaultDB(), "the service's database (a SQLite file or postgres://...)")
	cmd.AddCommand(newKey, rotate)
	return cmd
}
