"""Team self-service: teams and their quotas (``teams.yaml``), stack templates, and usage."""

from gpupool.teams.loader import Teams, load_teams, parse_teams
from gpupool.teams.models import Team, TeamsFile

__all__ = ["Team", "Teams", "TeamsFile", "load_teams", "parse_teams"]
